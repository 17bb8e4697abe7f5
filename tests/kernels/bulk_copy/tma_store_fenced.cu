// @kernel tile_store(CUtensorMap, const float*, float*)
// @shared tile_store 2048
// @barriers tile_store 17
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg buf:2048:iota --arg buf:4000
// @expect clean
// Each block fills a 16x32 shared tile from `in`, fences its writes for the async proxy, and thread 0 stores
// the tile with TMA into a 40x100 row-major tensor at column 32b - 8, row 24: the elements that fall
// outside the tensor are not written. Twin: tma_store_unfenced.cu.
#include <cuda.h>
#include "bulk_ptx.cuh"

__global__ void tile_store(const __grid_constant__ CUtensorMap map, const float* in, float* tensor)
{
    __shared__ alignas(128) float tile[16][32];
    tile[threadIdx.x / 32][threadIdx.x % 32] = in[512 * blockIdx.x + threadIdx.x];
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&map, 32 * blockIdx.x - 8, 24, tile);
        bulk_commit();
        bulk_wait_all();
    }
}
