// @kernel broadcast(const float*, float*)
// @shared broadcast 1032
// @barriers broadcast 21 27
// @launch --arch sm_90a --cluster 2 --grid 4 --block 256 --arg buf:512:iota --arg buf:1024
// @expect clean
// Rank 0 of each cluster of two loads the cluster's 1 KiB tile once, multicast to both blocks: the bytes land
// at the same offset in each block's shared memory and complete on each block's own mbarrier, at the same
// offset too. Each block expects the tile's bytes on its mbarrier, waits, and writes it reversed:
// out[256b + t] = in[256c + 255 - t] for cluster c of block b. Twin: multicast_load_no_wait.cu.
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
    bar_wait(&bar, 0);
    out[256 * blockIdx.x + threadIdx.x] = tile[255 - threadIdx.x];
    // rank 1's shared memory stays alive until the copy into it is done (it is: rank 1 waited)
    cluster_sync();
}
