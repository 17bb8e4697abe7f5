// @verify_launch --grid 4,4 --block 16,16
// @verify in race-free
// @verify out race-free
// tile_2d.cu with GPUVerify's precondition that the width is the launch's x
// extent: then every thread writes its own element.
#include <cuda.h>

__global__ void copy2d(float* out, const float* in, int w)
{
    __requires(w == 64);
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * w + x] = in[y * w + x];
}
