//pass
//--blockDim=32 --gridDim=1
// @expect clean
// @verify_unknown a pointer changes object around the loop
// Written for GPUVerify, whose cuda.h declared cuRAND's device API: the file uses it without including
// <curand_kernel.h>. Each thread seeds its own generator state (seed = its index, so curand_init skips
// nothing ahead) and writes one draw to its own slot. gpurace verify cannot follow curand_init's
// skip-ahead, whose matrix pointer moves between tables in a loop: it says so (unknown).
#include <cuda.h>

__global__ void seeded(curandState *states, unsigned int *out)
{
    unsigned int i = threadIdx.x;
    curand_init(i, 0, 0, &states[i]);
    out[i] = curand(&states[i]);
}
