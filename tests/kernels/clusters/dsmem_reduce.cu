// @kernel cluster_sum(const int*, int*)
// @shared cluster_sum 16
// @barriers cluster_sum 24
// @launch --arch compute_90 --cluster 4 --grid 8 --block 64 --arg buf:512:iota --arg buf:2
// @expect clean
// A cluster reduction over distributed shared memory: each block of a cluster of four sums its slice, and
// one thread per block stores the partial sum into block 0's `partials[rank]` through map_shared_rank.
// cluster.sync() orders those remote stores before block 0 reads them, so nothing races.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void cluster_sum(const int *in, int *out) {
    __shared__ int partials[4];
    cg::cluster_group cluster = cg::this_cluster();
    cg::thread_block block = cg::this_thread_block();
    unsigned rank = cluster.block_rank();
    int sum = 0;
    if (threadIdx.x == 0) {
        for (int i = 0; i < blockDim.x; i++) sum += in[blockIdx.x * blockDim.x + i];
        int *dst = cluster.map_shared_rank(partials, 0);
        dst[rank] = sum;
    }
    cluster.sync();
    if (rank == 0 && threadIdx.x == 0) {
        int total = 0;
        for (int r = 0; r < 4; r++) total += partials[r];
        out[blockIdx.x / 4] = total;
    }
}
