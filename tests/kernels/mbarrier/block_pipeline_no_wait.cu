// @kernel reverse(const float*, float*)
// @launch --arch compute_90 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect data-race shared 18 20
// block_pipeline.cu without consumer_wait(): the copies of the stage land when its mbarrier phase completes,
// and nothing orders that before the reads, so each read races with another thread's copy.
#include <cooperative_groups.h>
#include <cuda/pipeline>

namespace cg = cooperative_groups;

__global__ void reverse(const float* in, float* out)
{
    __shared__ float tile[64];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state);
    pipe.producer_acquire();
    cuda::memcpy_async(block, tile, in + 64 * blockIdx.x, sizeof(float) * 64, pipe);
    pipe.producer_commit();
    out[64 * blockIdx.x + threadIdx.x] = tile[63 - threadIdx.x];
    pipe.consumer_release();
}
