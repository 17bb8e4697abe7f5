// @kernel histogram(const unsigned char*, unsigned int*, int)
// @shared histogram 256
// @barriers histogram 15 18
// @atomics histogram 17:add.gpu 20:add.gpu
// @launch --grid 2 --block 128 --arg buf:1000:iota --arg buf:64 --arg 1000
// @expect clean
// Histogram with per-block shared bins merged into global bins.
#define BINS 64

__global__ void histogram(const unsigned char* data, unsigned int* bins, int n)
{
    __shared__ unsigned int local_bins[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local_bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local_bins[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        atomicAdd(&bins[b], local_bins[b]);
}
