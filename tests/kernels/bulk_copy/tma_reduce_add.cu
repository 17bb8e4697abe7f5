// @kernel tile_add(CUtensorMap, const int*, int*)
// @shared tile_add 2048
// @barriers tile_add 18
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:i32:40x100:16x32:2 --arg buf:2048:iota --arg buf:4000
// @expect clean
// Each block fills a 16x32 shared tile from `in`, fences its writes for the async proxy, and thread 0 adds the
// tile into a 40x100 row-major int tensor with a TMA reduction at column 16b - 8, row 30: neighbouring boxes
// overlap by 16 columns, where two blocks' reductions meet (atomic with each other), and the elements past
// the tensor's left, right and bottom edges are left alone. Twin: tma_reduce_and_store.cu.
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
}
