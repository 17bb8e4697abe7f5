// @kernel histogram(const unsigned char*, unsigned int*, int)
// @shared histogram 1024
// @barriers histogram 18 21
// @atomics histogram 20:add.cta 23:add.gpu
// @launch --grid 4 --block 256 --arg buf:4096:iota --arg buf:256 --arg 4096
// @expect clean
// A 256-bin byte histogram: each block counts into shared bins with
// block-scoped atomics, then adds its bins to the global ones.
#define BINS 256

__global__ void histogram(const unsigned char* data, unsigned int* bins, int n)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    // Every bin must be zero before any thread counts.
    int stride = blockDim.x * gridDim.x;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd_block(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        atomicAdd(&bins[b], local[b]);
}
