// @kernel scale(const float*, float*)
// @shared scale 1024
// @barriers scale 17
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect clean
// store_fenced.cu with thread 0 reusing the tile once cp.async.bulk.wait_group.read says the bulk store has
// read it (the global writes may still be in flight). Twin: store_reuse_before_read_wait.cu.
#include "bulk_ptx.cuh"

__global__ void scale(const float* in, float* out)
{
    __shared__ alignas(16) float tile[256];
    int i = 256 * blockIdx.x + threadIdx.x;
    tile[threadIdx.x] = 2.0f * in[i];
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_store(out + 256 * blockIdx.x, tile, sizeof(tile));
        bulk_commit();
        bulk_wait_read_all();
        tile[0] = 0.0f;
    }
}
