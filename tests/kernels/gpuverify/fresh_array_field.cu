//pass
//--blockDim=32 --gridDim=1
// @expect clean
// GPUVerify's __requires_fresh_array(p): p points to an array no other
// pointer reaches. gpurace gives every pointer field its own automatic
// buffer, so the annotation holds and compiles to nothing.
#include <cuda.h>

struct Holder {
    int* p;
};

__global__ void fill(Holder h)
{
    __requires_fresh_array(h.p);
    h.p[threadIdx.x] = threadIdx.x;
}
