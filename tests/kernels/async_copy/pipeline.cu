// @kernel pipeline(const float*, float*, int)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:512:iota --arg buf:128 --arg 4
// @expect clean
// A double-buffered cp.async pipeline: while the block sums stage k from one buffer, stage k + 1 is copied
// into the other. __pipeline_wait_prior(1) completes every stage but the newest, the barrier after it lets
// each thread read the element another thread copied, and the barrier at the end of the iteration keeps the
// next copy out of the buffer until every thread has read it. Block b sums stage k's element TILE - 1 - t.
// Twins: pipeline_no_wait.cu (no wait), pipeline_no_barrier.cu (no barrier after the wait).
#include <cuda_pipeline.h>

#define TILE 64

__device__ __forceinline__ void load_stage(float* buffer, const float* in, int tiles, int k)
{
    __pipeline_memcpy_async(&buffer[threadIdx.x], &in[(blockIdx.x * tiles + k) * TILE + threadIdx.x], sizeof(float));
}

__global__ void pipeline(const float* in, float* out, int tiles)
{
    __shared__ float stage[2][TILE];
    float sum = 0.0f;
    load_stage(stage[0], in, tiles, 0);
    __pipeline_commit();
    for (int k = 0; k < tiles; ++k) {
        if (k + 1 < tiles)
            load_stage(stage[(k + 1) % 2], in, tiles, k + 1);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        sum += stage[k % 2][TILE - 1 - threadIdx.x];
        __syncthreads();
    }
    out[blockIdx.x * TILE + threadIdx.x] = sum;
}
