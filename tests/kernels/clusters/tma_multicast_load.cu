// @kernel tile_broadcast(CUtensorMap, float*, const float*)
// @shared tile_broadcast 2056
// @barriers tile_broadcast 22 28
// @launch --arch sm_90a --cluster 2 --grid 4 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg buf:4096 --arg buf:4000:iota
// @expect clean
// Rank 0 of each cluster of two loads a 16x32 box of a 40x100 tensor once with a multicast TMA load: the box
// lands at the same offset in both blocks' shared memory and completes on each block's own mbarrier. Cluster c
// loads the box at column 32c - 8, row 24 (zeros past the tensor's edges); every thread of both blocks waits
// and copies one element to out[512b + t].
#include <cuda.h>
#include "../bulk_copy/bulk_ptx.cuh"

__global__ void tile_broadcast(const __grid_constant__ CUtensorMap map, float* out, const float* tensor)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        bar_init(&bar, 1);
        bar_arrive_expect_tx(&bar, sizeof(tile));
    }
    // both blocks' mbarriers are initialised before rank 0's copy signals them
    cluster_sync();
    if (threadIdx.x == 0 && cluster_rank() == 0)
        tma_load_2d_multicast(tile, &map, 32 * (blockIdx.x / 2) - 8, 24, &bar, 0x3);
    bar_wait(&bar, 0);
    out[512 * blockIdx.x + threadIdx.x] = tile[threadIdx.x / 32][threadIdx.x % 32];
    // rank 1's shared memory stays alive until the copy into it is done
    cluster_sync();
}
