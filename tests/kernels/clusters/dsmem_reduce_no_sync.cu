// @kernel cluster_sum(const int*, int*)
// @shared cluster_sum 16
// @launch --arch compute_90 --cluster 4 --grid 8 --block 64 --arg buf:512:iota --arg buf:2
// @expect data-race shared 21 25
// dsmem_reduce.cu without the cluster.sync(): block 0 reads the partial sums while the other blocks of its
// cluster may still be storing them into its shared memory.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void cluster_sum(const int *in, int *out) {
    __shared__ int partials[4];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int sum = 0;
    if (threadIdx.x == 0) {
        for (int i = 0; i < blockDim.x; i++) sum += in[blockIdx.x * blockDim.x + i];
        int *dst = cluster.map_shared_rank(partials, 0);
        if (rank == 0) partials[0] = sum;
        else
            dst[rank] = sum;
    }
    if (rank == 0 && threadIdx.x == 0) {
        int total = 0;
        for (int r = 0; r < 4; r++) total += partials[r];
        out[blockIdx.x / 4] = total;
    }
}
