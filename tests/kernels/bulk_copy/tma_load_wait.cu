// @kernel tile_copy(CUtensorMap, float*, const float*)
// @shared tile_copy 2056
// @barriers tile_copy 20
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg buf:2048 --arg buf:4000:iota
// @expect clean
// Each block loads a 16x32 tile of a 40x100 row-major tensor with TMA: block b's box starts at column
// 32b - 8 and row 24, so boxes run past the tensor's left, right and bottom edges and those elements are
// zeros. Every thread waits for the mbarrier phase, then copies one element to out. `tensor` is the
// tensor's memory, which the host encoded in the map (the kernel reads it only through the map).
// Twin: tma_load_no_wait.cu.
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
    bar_wait(&bar, 0);
    out[512 * blockIdx.x + threadIdx.x] = tile[threadIdx.x / 32][threadIdx.x % 32];
}
