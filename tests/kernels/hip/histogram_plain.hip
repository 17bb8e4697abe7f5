// @kernel histogram(const int*, int*, int, int)
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:8 --arg 128 --arg 8
// @expect data-race global 12 12
// histogram_atomic.hip with a plain increment: threads of different blocks
// (and warps) read and write the same bin unordered.
#include <hip/hip_runtime.h>

__global__ void histogram(const int* values, int* bins, int n, int nbins)
{
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n)
        bins[values[i] % nbins] += 1;
}
