// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect data-race shared 15 18
// @expect uninitialized-read shared 18
// memcpy_async_pipeline.cu without pipe.consumer_wait(): the barrier does not complete the copies, so each
// thread reads an element whose copy may still be in flight (and that nothing has written yet).
#include <cuda/pipeline>

__global__ void reverse(const float* in, float* out)
{
    __shared__ float tile[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    auto pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), pipe);
    pipe.producer_commit();
    __syncthreads();
    out[i] = tile[63 - threadIdx.x];
    pipe.consumer_release();
}
