// @kernel histogram(const int*, int*, int, int)
// @atomics histogram 13:add.gpu
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:8 --arg 128 --arg 8
// @expect clean
// A histogram in global memory, one atomicAdd per element: threads of both
// blocks update the same bins, and atomics never race with each other.
#include <hip/hip_runtime.h>

__global__ void histogram(const int* values, int* bins, int n, int nbins)
{
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n)
        atomicAdd(&bins[values[i] % nbins], 1);
}
