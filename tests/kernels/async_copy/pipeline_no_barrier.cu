// @kernel pipeline(const float*, float*, int)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:512:iota --arg buf:128 --arg 4
// @expect data-race shared 13 27
// pipeline.cu without the barrier after __pipeline_wait_prior: each thread waits for its own copies only,
// then reads the element that another thread copied, which that thread's wait completed with nothing
// ordering it before the read: an ordinary race between the copy and the read.
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
        sum += stage[k % 2][TILE - 1 - threadIdx.x];
        __syncthreads();
    }
    out[blockIdx.x * TILE + threadIdx.x] = sum;
}
