// @kernel gather(const int*, int*)
// @shared gather 24
// @barriers gather 23
// @launch --arch sm_90a --cluster 4 --grid 8 --block 32 --arg buf:256:iota --arg buf:2
// @expect clean
// A cluster-scope mbarrier: thread 0 of each block of a cluster of four sums its block's slice, stores the sum
// into rank 0's `partials[rank]` through distributed shared memory, and arrives on rank 0's mbarrier with a
// release at cluster scope. Rank 0 waits with an acquire at cluster scope, which orders the four remote stores
// before its reads: out[c] is the sum of the cluster's 128 elements. Twin: remote_arrive_read_before_wait.cu.
#include "../bulk_copy/bulk_ptx.cuh"
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void gather(const int* in, int* out)
{
    __shared__ int partials[4];
    __shared__ alignas(8) unsigned long long bar;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    if (threadIdx.x == 0 && rank == 0)
        bar_init(&bar, 4);
    cluster.sync();
    if (threadIdx.x == 0) {
        int sum = 0;
        for (int i = 0; i < 32; i++)
            sum += in[32 * blockIdx.x + i];
        cluster.map_shared_rank(partials, 0)[rank] = sum;
        bar_arrive_remote(&bar, 0);
    }
    if (threadIdx.x == 0 && rank == 0) {
        bar_wait_cluster(&bar, 0);
        out[blockIdx.x / 4] = partials[0] + partials[1] + partials[2] + partials[3];
    }
}
