// @kernel tile_store(CUtensorMap, const float*, float*)
// @shared tile_store 2048
// @barriers tile_store 15
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg buf:2048:iota --arg buf:4000
// @expect data-race shared 14 17
// tma_store_fenced.cu without fence.proxy.async after the generic writes of the tile: the TMA store,
// an async-proxy read, may not see them.
#include <cuda.h>
#include "bulk_ptx.cuh"

__global__ void tile_store(const __grid_constant__ CUtensorMap map, const float* in, float* tensor)
{
    __shared__ alignas(128) float tile[16][32];
    tile[threadIdx.x / 32][threadIdx.x % 32] = in[512 * blockIdx.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&map, 32 * blockIdx.x - 8, 24, tile);
        bulk_commit();
        bulk_wait_all();
    }
}
