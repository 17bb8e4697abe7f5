// @kernel swizzle_round_trip(CUtensorMap, CUtensorMap, float*, const float*, float*)
// @shared swizzle_round_trip 2056
// @barriers swizzle_round_trip 22
// @launch --arch sm_90a --grid 4 --block 512 --arg tensormap:f32:64x32:16x32:3:swizzle=128B --arg tensormap:f32:64x32:16x32:4:swizzle=128B --arg buf:2048 --arg buf:2048:iota --arg buf:2048
// @expect clean
// TMA with a 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B), both ways. Block b loads rows 16b.. of a 64x32
// tensor through a swizzled map: in every 1024 bytes of the tile, the 16-byte chunk k of 128-byte row r lands
// at chunk k ^ (r % 8). Each thread reads its element where the swizzle put it and copies it to `plain`, and
// thread 0 stores the (still swizzled) tile through the second map, which undoes the swizzle: `plain` and
// `out` both equal `in` (tests/sim/test_tma_swizzle.py), and nothing races (the store is issued after the
// load's mbarrier phase; the threads' reads and the store's read of the tile are both reads).
#include <cuda.h>
#include "bulk_ptx.cuh"

__global__ void swizzle_round_trip(const __grid_constant__ CUtensorMap load_map, const __grid_constant__ CUtensorMap store_map,
                                   float* plain, const float* in, float* out)
{
    __shared__ alignas(1024) float tile[16 * 32];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0)
        bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_arrive_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, &load_map, 0, 16 * blockIdx.x, &bar);
    }
    bar_wait(&bar, 0);
    unsigned byte = threadIdx.x * 4;                        // row threadIdx.x / 32, column threadIdx.x % 32
    unsigned swizzled = byte ^ (((byte >> 7) & 7) << 4);    // its 16-byte chunk moved within its 128-byte row
    plain[512 * blockIdx.x + threadIdx.x] = tile[swizzled / 4];
    if (threadIdx.x == 0) {
        tma_store_2d(&store_map, 0, 16 * blockIdx.x, tile);
        bulk_commit();
        bulk_wait_all();
    }
}
