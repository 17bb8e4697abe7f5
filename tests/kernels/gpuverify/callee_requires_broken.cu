//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=1 --no-inline
// @expect assertion-failure 12
// A __requires in a device function is the callee's precondition: the kernel passes
// threadIdx.x - 8, which breaks it for the first eight threads (a bug in the caller,
// not a launch outside the kernel's domain). __enabled() holds in the thread running it.
// (The read wraps the index so that only the broken precondition is found.)
#include <cuda.h>

__device__ int slot(int *A, int i)
{
    __requires(__implies(__enabled(), i >= 0));
    return A[i & 63];
}

__global__ void shifted(int *A, int *out)
{
    out[threadIdx.x] = slot(A, (int)threadIdx.x - 8);
}
