//--blockDim=64 --gridDim=2
// @launch --search
// @expect data-race global 14 14
// A kernel in GPUVerify's style: the header gives the launch, and
// __requires bounds the stride to 0..4. The search draws strides only from
// that range, so no candidate violates the precondition, and finds the
// stride 0 at which every thread writes a[0].
#include <cuda.h>

__global__ void scatter(int* a, int stride)
{
    __requires(stride >= 0 && stride <= 4);
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    a[tid * stride] = tid;
}
