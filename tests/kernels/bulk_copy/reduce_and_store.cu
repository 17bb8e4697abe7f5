// @kernel column_sums(const unsigned*, unsigned*)
// @shared column_sums 1024
// @barriers column_sums 15
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:256
// @expect data-race global 17 22
// reduce_add.cu where thread 1 of block 0 also clears out[0] with a plain store: the bulk reductions
// are atomic with each other, not with an ordinary store to the same bytes.
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
    if (blockIdx.x == 0 && threadIdx.x == 1)
        out[0] = 0;
}
