//pass
//--blockDim=64 --gridDim=2
// @launch --arg auto --arg 100
// @expect_error the launch violates __requires(n % 64 == 0 && n >= 64) at
// @expect_error requires_violated.cu:11
// n = 100 is outside the kernel's domain, so the launch is rejected rather than checked.
#include <cuda.h>

__global__ void fill(int *A, int n)
{
    __requires(n % 64 == 0 && n >= 64);
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < n)
        A[gid] = n;
}
