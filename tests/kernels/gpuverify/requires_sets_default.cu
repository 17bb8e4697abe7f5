//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=1 --no-inline
// @expect data-race global 12 12
// No arguments given: the default for `width` (the thread count, 64) would break the
// precondition, so `auto` takes the value __requires states, 32, under which threads
// t and t + 32 write the same element.
#include <cuda.h>

__global__ void wrap(int *A, int width)
{
    __requires(width == 32);
    A[threadIdx.x % width] = threadIdx.x;
}
