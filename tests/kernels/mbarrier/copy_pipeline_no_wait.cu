// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect data-race shared 19 21
// @expect uninitialized-read shared 21
// copy_pipeline.cu with arrive() in place of arrive_and_wait(): the copies complete with the barrier's phase,
// which nothing waits for, so each read of the tile races with another thread's copy in flight.
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
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), bar);
    (void)bar.arrive();
    out[i] = tile[63 - threadIdx.x];
}
