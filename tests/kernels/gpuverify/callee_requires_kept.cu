//pass
//--blockDim=64 --gridDim=1 --no-inline
// @expect clean
// The same callee precondition, which every call keeps.
#include <cuda.h>

__device__ int slot(int *A, int i)
{
    __requires(__implies(__enabled(), i >= 0));
    return A[i];
}

__global__ void shifted(int *A, int *out)
{
    out[threadIdx.x] = slot(A, (int)threadIdx.x + 8);
}
