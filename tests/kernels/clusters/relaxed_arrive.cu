// @kernel exchange(int*)
// @shared exchange 256
// @barriers exchange 17 18 21
// @launch --arch compute_90 --cluster 2 --grid 2 --block 64 --arg buf:128
// @expect data-race shared 16 20
// Each block writes its own shared array, then reads its neighbour's through distributed shared memory
// after a split cluster barrier whose arrive is .relaxed: a relaxed arrive orders nothing, so the reads
// race with the neighbour's writes (with the default .release arrive they would not).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void exchange(int *out) {
    __shared__ int mine[64];
    cg::cluster_group cluster = cg::this_cluster();
    mine[threadIdx.x] = blockIdx.x * 64 + threadIdx.x;
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    int *theirs = cluster.map_shared_rank(mine, cluster.block_rank() ^ 1);
    out[blockIdx.x * 64 + threadIdx.x] = theirs[threadIdx.x];
    cluster.sync();
}
