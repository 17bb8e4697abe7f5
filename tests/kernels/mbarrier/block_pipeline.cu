// @kernel reverse(const float*, float*)
// @launch --arch compute_90 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect clean
// A block-scope cuda::pipeline (shared pipeline_shared_state): the block copies its tile with
// cuda::memcpy_async, which compiles to cp.async plus cp.async.mbarrier.arrive on the stage's mbarrier, and
// consumer_wait() waits for the stage's phase with mbarrier.try_wait.parity. Thread t of block b writes
// out[64b + t] = in[64b + 63 - t]. Twin: block_pipeline_no_wait.cu.
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
    pipe.consumer_wait();
    out[64 * blockIdx.x + threadIdx.x] = tile[63 - threadIdx.x];
    pipe.consumer_release();
}
