//pass
//--blockDim=64 --gridDim=2
// @expect clean
// @verify states race-free
// @verify out race-free
// Written for GPUVerify, whose cuda.h declared cuRAND's device API: the file uses it without including
// <curand_kernel.h>. Each thread draws from its own generator state and writes the draw to its own slot.
#include <cuda.h>

__global__ void draw(curandState *states, unsigned int *out)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = curand(&states[i]);
}
