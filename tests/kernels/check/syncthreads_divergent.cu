// @launch --grid 1 --block 64 --arg buf:64
// @expect barrier-divergence 9 12
// __syncthreads inside a condition that only half the block takes.
__global__ void k(int* out)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 32) {
        __syncthreads();
        out[threadIdx.x] = s[threadIdx.x + 32];
    }
}
