//pass
//--blockDim=32 --gridDim=1
// @expect_error texture_reference.cu:10: texture references (`texture<...>`) were removed in CUDA 12: use texture objects (cudaTextureObject_t)
// A legacy texture reference, which GPUVerify's own front end accepted: CUDA 12 removed texture
// references, so no CUDA compiler of today takes this file; gpurace says so and names the line
// (check and verify alike).
#include <cuda.h>

__device__ float out[32];
texture<float, 1, cudaReadModeElementType> samples;

__global__ void fetch()
{
    out[threadIdx.x] = tex1Dfetch(samples, threadIdx.x);
}
