//xfail:BOOGIE_ERROR
//--blockDim=8 --gridDim=8 --no-inline
//kernel.cu:11:5: error: this assertion might not hold for work item
// @expect assertion-failure 11
// GPUVerify's failing-assert example: the assertion holds for small launches only.
#include <cuda.h>

__global__ void index_below_sixty(int *A)
{
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    __assert(gid < 60);
    A[gid] = gid;
}
