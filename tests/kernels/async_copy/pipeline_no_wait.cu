// @kernel pipeline(const float*, float*, int)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:256:iota --arg buf:128 --arg 2
// @expect data-race shared 15 29
// @expect uninitialized-read shared 29
// pipeline.cu without __pipeline_wait_prior: each stage is read while the copies into it may still be in
// flight (they complete only when the threads exit). The first reads of each buffer also read shared memory
// nothing has written yet. Two stages, so that no copy goes into a buffer whose earlier copy is pending
// (that would be a second race, between the two copies).
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
        __syncthreads();
        sum += stage[k % 2][TILE - 1 - threadIdx.x];
        __syncthreads();
    }
    out[blockIdx.x * TILE + threadIdx.x] = sum;
}
