// @kernel exchange(int*)
// @shared exchange 256
// @barriers exchange 17 19 22
// @launch --arch compute_90 --cluster 2 --grid 2 --block 64 --arg buf:128
// @expect clean
// relaxed_arrive.cu with a releasing arrive (the default): the writes before it are ordered before the
// neighbour's reads after its wait. Work between the arrive and the wait (the store to `out`) is allowed;
// the final cluster.sync() keeps each block's shared memory alive until its neighbour has read it.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void exchange(int *out) {
    __shared__ int mine[64];
    cg::cluster_group cluster = cg::this_cluster();
    mine[threadIdx.x] = blockIdx.x * 64 + threadIdx.x;
    cluster.barrier_arrive();
    out[blockIdx.x * 64 + threadIdx.x] = 0;
    cluster.barrier_wait();
    int *theirs = cluster.map_shared_rank(mine, cluster.block_rank() ^ 1);
    out[blockIdx.x * 64 + threadIdx.x] = theirs[threadIdx.x];
    cluster.sync();
}
