//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=1
// @expect data-race global 14 14
// @verify states race-free
// @verify out race confirmed 14 14
// Written for GPUVerify, whose cuda.h declared cuRAND's device API: the file uses it without including
// <curand_kernel.h>. Each of 64 threads draws one of 4 slots from its own generator state and writes its
// index there: at least two threads pick the same slot (pigeonhole), and nothing orders their stores.
#include <cuda.h>

__global__ void scatter(curandState *states, unsigned int *out)
{
    unsigned int i = threadIdx.x;
    out[curand(&states[i]) % 4] = i;
}
