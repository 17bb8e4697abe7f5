//pass
//--blockDim=64 --gridDim=2
// @launch --arg auto --arg 128
// @expect clean
// The launch satisfies the kernel's preconditions; each thread writes its own element.
#include <cuda.h>

__global__ void fill(int *A, int n)
{
    __requires(n == 128);
    __global_requires(__is_pow2(n));
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < n)
        A[gid] = n;
}
