// @kernel column_sums(const unsigned*, unsigned*)
// @shared column_sums 1024
// @barriers column_sums 17
// @launch --arch sm_90a --grid 4 --block 256 --arg buf:1024:iota --arg buf:256
// @expect clean
// Every block writes its 256 elements to a shared tile, fences them for the async proxy, and thread 0 adds
// the tile into out with one bulk reduction. The reductions of the four blocks meet on the same bytes, and
// reductions are atomic with each other: out[t] gains in[t] + in[256 + t] + in[512 + t] + in[768 + t].
// Twin: reduce_and_store.cu.
#include "bulk_ptx.cuh"

__global__ void column_sums(const unsigned* in, unsigned* out)
{
    __shared__ alignas(16) unsigned tile[256];
    tile[threadIdx.x] = in[256 * blockIdx.x + threadIdx.x];
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_reduce("add.u32", out, tile, sizeof(tile));
        bulk_commit();
        bulk_wait_all();
    }
}
