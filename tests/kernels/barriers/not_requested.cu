// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect clean
// The same trailing barrier as trailing.cu, checked without
// --redundant-barriers: performance notes are only reported on request.
__global__ void shift_left(const int* in, int* out)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[(t + 1) % 64];
    __syncthreads();
}
