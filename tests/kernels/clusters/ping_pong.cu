// @kernel ping_pong(int*, int)
// @shared ping_pong 4
// @barriers ping_pong 20 24 26
// @launch --arch compute_90 --cluster 2 --grid 4 --block 32 --arg buf:4 --arg 6
// @expect clean
// Rounds of a ping-pong between the two blocks of each cluster: in round r, block r % 2 writes the other
// block's word through distributed shared memory, a cluster.sync() orders it before the owner reads it,
// and a second cluster.sync() orders that read before the next round's write. Many barrier phases, no race
// (each block zeroes its word first: the compiler loads it in every thread, whichever reads it).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void ping_pong(int *out, int rounds) {
    __shared__ int word;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int *other = cluster.map_shared_rank(&word, rank ^ 1);
    if (threadIdx.x == 0) word = 0;
    cluster.sync();
    int seen = 0;
    for (int r = 0; r < rounds; r++) {
        if (threadIdx.x == 0 && rank == r % 2) *other = r;
        cluster.sync();
        if (threadIdx.x == 0 && rank != r % 2) seen += word;
        cluster.sync();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = seen;
}
