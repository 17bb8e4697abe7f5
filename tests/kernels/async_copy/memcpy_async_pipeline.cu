// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect clean
// cuda::memcpy_async through a thread-scope cuda::pipeline (cp.async, its commit and its wait), then a
// barrier before each thread reads another's element. The twin memcpy_async_no_wait.cu skips consumer_wait.
#include <cuda/pipeline>

__global__ void reverse(const float* in, float* out)
{
    __shared__ float tile[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    auto pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    __syncthreads();
    out[i] = tile[63 - threadIdx.x];
    pipe.consumer_release();
}
