// @launch --grid 2 --block 64 --arg buf:128 --arg 1
// @expect clean
// __syncthreads under a condition every thread of the block evaluates alike.
__global__ void k(int* out, int flag)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (flag) {
        __syncthreads();
        out[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x];
    }
}
