// @kernel scale(const float*, float*)
// @shared scale 1024
// @barriers scale 15
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect data-race shared 14 17
// store_fenced.cu without fence.proxy.async: the barrier orders the generic-proxy writes of the tile before
// the bulk store, but the async proxy that reads them may not see them.
#include "bulk_ptx.cuh"

__global__ void scale(const float* in, float* out)
{
    __shared__ alignas(16) float tile[256];
    int i = 256 * blockIdx.x + threadIdx.x;
    tile[threadIdx.x] = 2.0f * in[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_store(out + 256 * blockIdx.x, tile, sizeof(tile));
        bulk_commit();
        bulk_wait_all();
    }
}
