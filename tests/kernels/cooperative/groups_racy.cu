// @kernel tiles(const int*, int*)
// @shared tiles 512
// @barriers tiles 19
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect data-race shared 24 25
// groups.cu without the 16-thread tile's sync(): each thread reads the slot its tile neighbour writes,
// and nothing orders the write before the read. The block's sync, the warp tile's shuffles and the
// coalesced group are as in the race-free twin.
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
    int w = exchange[(r & ~15u) + ((quarter.thread_rank() + 1) & 15)];
    if (r % 2 == 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        w += active.thread_rank() + active.shfl(w, 0);
    }
    out[blockIdx.x * 64 + r] = w;
}
