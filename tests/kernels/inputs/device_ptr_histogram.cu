// @launch --grid 2 --block 64
// @expect data-race global 14 14
// The kernel's output is a `__device__` pointer the host would set with
// cudaMemcpyToSymbol. With no --arg, `bins` gets an automatic buffer of its
// own (reported as `__device__ bins (int*)`) and `in` another. Threads
// increment shared bins without atomics: a race. `table` is initialised, so
// it keeps pointing at `storage` rather than getting a buffer.
__device__ int *bins;
__device__ int storage[128];
__device__ int *table = storage;
__global__ void histogram(const int* in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bins[in[i] & 3] += 1;
    table[i] = i;
}
