// @kernel tiles(const int*, int*)
// @shared tiles 512
// @barriers tiles 21
// @warpsyncs tiles 27
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect clean
// Cooperative groups below the grid: the block stages its inputs and synchronises (this_thread_block),
// each warp-sized tile sums a value with shfl_down, each 16-thread tile exchanges through shared memory
// after its own sync(), and the even lanes add their rank among the active threads (coalesced_threads).
// Every exchange is ordered by the group's sync, so nothing races (groups_racy.cu drops the tile's sync).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void tiles(const int *in, int *out) {
    __shared__ int stage[64];
    __shared__ int exchange[64];
    cg::thread_block block = cg::this_thread_block();
    unsigned r = block.thread_rank();
    stage[r] = in[blockIdx.x * 64 + r];
    block.sync();
    int v = stage[63 - r];
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    for (int offset = 16; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
    cg::thread_block_tile<16> quarter = cg::tiled_partition<16>(block);
    exchange[r] = v;
    quarter.sync();
    int w = exchange[(r & ~15u) + ((quarter.thread_rank() + 1) & 15)];
    if (r % 2 == 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        w += active.thread_rank() + active.shfl(w, 0);
    }
    out[blockIdx.x * 64 + r] = w;
}
