// @launch --grid 4 --block 256 --arg buf:3000:iota --arg buf:64 --arg 3000
// @expect clean
// 64-bin histogram: per-block bins in shared memory, merged into the global bins.
#define BINS 64
__global__ void histogram(const unsigned* data, unsigned* bins, int n)
{
    __shared__ unsigned local[BINS];
    if (threadIdx.x < BINS)
        local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[(data[i] * 2654435761u) % BINS], 1u);
    __syncthreads();
    if (threadIdx.x < BINS)
        atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
