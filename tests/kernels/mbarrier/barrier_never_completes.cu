// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 1 --block 64 --arg buf:64:iota --arg buf:64
// @expect deadlock shared 16 19
// barrier_sync.cu with the barrier expecting one arrival more than the block has threads: every thread
// arrives and waits for a phase that can never complete.
#include <cuda/barrier>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void reverse(const float* in, float* out)
{
    __shared__ float tile[64];
    __shared__ block_barrier bar;
    int i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x + 1);
    __syncthreads();
    tile[threadIdx.x] = in[i];
    bar.arrive_and_wait();
    out[i] = tile[63 - threadIdx.x];
}
