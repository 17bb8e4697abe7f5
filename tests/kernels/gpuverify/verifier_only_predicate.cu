//pass
//--blockDim=32 --gridDim=1
// @expect_error verifier_only_predicate.cu:11: not supported: GPUVerify predicate __uniform_int() can only be checked statically
// __uniform_int compares a value across two threads: only a verifier can evaluate it,
// and this __assert executes it.
#include <cuda.h>

__global__ void scale(int *A, int factor)
{
    A[threadIdx.x] *= factor;
    __assert(__uniform_int(factor));
}
