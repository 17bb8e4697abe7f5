// @kernel broadcast(const float*, float*)
// @shared broadcast 1032
// @barriers broadcast 20 25
// @launch --arch sm_90a --cluster 2 --grid 4 --block 256 --arg buf:512:iota --arg buf:1024
// @expect data-race shared 22 24
// @expect uninitialized-read shared 24
// multicast_load.cu without the wait: both blocks read the tile while rank 0's multicast copy may still be
// writing it, rank 1 included, whose tile only rank 0's copy writes.
#include "../bulk_copy/bulk_ptx.cuh"

__global__ void broadcast(const float* in, float* out)
{
    __shared__ alignas(16) float tile[256];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        bar_init(&bar, 1);
        bar_arrive_expect_tx(&bar, sizeof(tile));
    }
    // the mbarriers of both blocks are initialised before rank 0's copy signals them
    cluster_sync();
    if (threadIdx.x == 0 && cluster_rank() == 0)
        bulk_load_multicast(tile, in + 256 * (blockIdx.x / 2), sizeof(tile), &bar, 0x3);
    // missing: bar_wait(&bar, 0);
    out[256 * blockIdx.x + threadIdx.x] = tile[255 - threadIdx.x];
    cluster_sync();
}
