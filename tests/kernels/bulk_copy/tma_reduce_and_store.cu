// @kernel tile_add(CUtensorMap, const int*, int*)
// @shared tile_add 2048
// @barriers tile_add 16
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:i32:40x100:16x32:2 --arg buf:2048:iota --arg buf:4000
// @expect data-race global 18 23
// tma_reduce_add.cu where thread 1 of block 0 also clears tensor[30][5], inside block 0's box, with a plain
// store: the TMA reduction's element there is an atomic, which races with an ordinary store.
#include <cuda.h>
#include "bulk_ptx.cuh"

__global__ void tile_add(const __grid_constant__ CUtensorMap map, const int* in, int* tensor)
{
    __shared__ alignas(128) int tile[16][32];
    tile[threadIdx.x / 32][threadIdx.x % 32] = in[512 * blockIdx.x + threadIdx.x];
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_reduce_2d("add", &map, 16 * blockIdx.x - 8, 30, tile);
        bulk_commit();
        bulk_wait_all();
    }
    if (blockIdx.x == 0 && threadIdx.x == 1)
        tensor[30 * 100 + 5] = 0;
}
