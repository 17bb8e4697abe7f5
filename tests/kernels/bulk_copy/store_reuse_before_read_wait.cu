// @kernel scale(const float*, float*)
// @shared scale 1024
// @barriers scale 17
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect data-race shared 18 20
// store_fenced.cu with thread 0 reusing the tile before cp.async.bulk.wait_group.read: the bulk store may
// still be reading the bytes it overwrites. Twin: store_reuse_after_read_wait.cu.
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
        tile[0] = 0.0f;
        bulk_wait_read_all();
    }
}
