// @kernel cluster_sums(const int*, int*)
// @shared cluster_sums 264
// @barriers cluster_sums 24 31
// @launch --arch sm_90a --cluster 4 --grid 8 --block 64 --arg buf:512:iota --arg buf:128
// @expect clean
// Each block of a cluster of four loads its 64 elements into a shared tile; ranks 1..3 add their tiles into
// rank 0's with bulk reductions into distributed shared memory, each completing its bytes on rank 0's mbarrier,
// which expects all three. Rank 0 waits for the phase and writes the cluster's column sums:
// out[64c + t] = sum over r of in[256c + 64r + t]. The tile writes are fenced for the async proxy that reads
// them, and the first cluster barrier orders the mbarrier's init and rank 0's tile before the reductions.
#include "../bulk_copy/bulk_ptx.cuh"

__global__ void cluster_sums(const int* in, int* out)
{
    __shared__ alignas(16) int tile[64];
    __shared__ alignas(8) unsigned long long bar;
    unsigned rank = cluster_rank();
    tile[threadIdx.x] = in[64 * blockIdx.x + threadIdx.x];
    fence_proxy_async();
    if (threadIdx.x == 0 && rank == 0) {
        bar_init(&bar, 1);
        bar_arrive_expect_tx(&bar, 3 * sizeof(tile));
    }
    cluster_sync();
    if (threadIdx.x == 0 && rank != 0)
        bulk_reduce_to_rank("add.s32", tile, tile, sizeof(tile), &bar, 0);
    if (rank == 0) {
        bar_wait(&bar, 0);
        out[64 * (blockIdx.x / 4) + threadIdx.x] = tile[threadIdx.x];
    }
    cluster_sync();
}
