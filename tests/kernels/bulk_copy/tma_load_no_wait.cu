// @kernel tile_copy(CUtensorMap, float*, const float*)
// @shared tile_copy 2056
// @barriers tile_copy 18
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg buf:2048 --arg buf:4000:iota
// @expect data-race shared 21 23
// @expect uninitialized-read shared 23
// tma_load_wait.cu without the wait for the mbarrier phase: every thread reads the tile while the TMA
// load may still be writing it.
#include <cuda.h>
#include "bulk_ptx.cuh"

__global__ void tile_copy(const __grid_constant__ CUtensorMap map, float* out, const float* tensor)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0)
        bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_arrive_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, &map, 32 * blockIdx.x - 8, 24, &bar);
    }
    out[512 * blockIdx.x + threadIdx.x] = tile[threadIdx.x / 32][threadIdx.x % 32];
}
