//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=1 --no-inline
// @expect data-race global 12 12
// As requires_sets_default.cu with the bound stated as an assumption: `auto` takes
// the value __assume states for `width`, 32 (the default, the thread count 64, would
// break it), under which threads t and t + 32 write the same element.
#include <cuda.h>

__global__ void wrap(int *A, int width)
{
    __assume(width == 32);
    A[threadIdx.x % width] = threadIdx.x;
}
