// @kernel cluster_count(const int*, int*)
// @shared cluster_count 4
// @barriers cluster_count 18 21
// @atomics cluster_count 20:add.gpu
// @launch --arch compute_90 --grid 4 --block 64 --arg buf:256:iota --arg buf:2
// @expect clean
// Every thread of a cluster of two (the kernel's __cluster_dims__) adds its element into block 0's shared
// counter with an atomic through distributed shared memory: atomics do not race with each other, and the
// cluster.sync()s order the counter's initialisation before them and them before block 0's read.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) cluster_count(const int *in, int *out) {
    __shared__ int total;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) total = 0;
    cluster.sync();
    int *dst = cluster.map_shared_rank(&total, 0);
    atomicAdd(dst, in[blockIdx.x * blockDim.x + threadIdx.x]);
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) out[blockIdx.x / 2] = total;
}
