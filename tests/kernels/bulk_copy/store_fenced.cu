// @kernel scale(const float*, float*)
// @shared scale 1024
// @barriers scale 17
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect clean
// Every thread writes its element of a shared tile, makes the write visible to the async proxy with
// fence.proxy.async, and the barrier orders it before thread 0's bulk store of the tile to global memory,
// which thread 0 waits for. out[256b + t] = 2 * in[256b + t]. Twin: store_unfenced.cu.
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
        bulk_wait_all();
    }
}
