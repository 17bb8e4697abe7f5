// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect data-race shared 19 21
// @expect uninitialized-read shared 21
// barrier_sync.cu with the read moved between the arrive and the wait: the arrive publishes the thread's own
// store, but nothing orders the other threads' stores before the read.
#include <cuda/barrier>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void reverse(const float* in, float* out)
{
    __shared__ float tile[64];
    __shared__ block_barrier bar;
    int i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x);
    __syncthreads();
    tile[threadIdx.x] = in[i];
    block_barrier::arrival_token token = bar.arrive();
    float mirrored = tile[63 - threadIdx.x];
    bar.wait(std::move(token));
    out[i] = mirrored;
}
