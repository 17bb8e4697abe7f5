// @kernel gather(const int*, int*)
// @shared gather 24
// @barriers gather 21
// @launch --arch sm_90a --cluster 4 --grid 8 --block 32 --arg buf:256:iota --arg buf:2
// @expect data-race shared 26 30
// remote_arrive.cu where rank 0 reads the partial sums before it waits on the mbarrier: the remote stores
// of the other blocks are ordered before the wait, not before the read.
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
        int total = partials[0] + partials[1] + partials[2] + partials[3];
        bar_wait_cluster(&bar, 0);
        out[blockIdx.x / 4] = total;
    }
}
