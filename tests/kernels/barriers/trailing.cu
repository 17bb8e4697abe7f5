// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:128 --redundant-barriers
// @expect redundant-barrier 12
// The first barrier is needed (each thread reads its neighbour's slot); the
// one at the end of the kernel has nothing after it to order.
__global__ void shift_left(const int* in, int* out)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[(t + 1) % 64];
    __syncthreads();
}
