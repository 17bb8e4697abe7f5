// @kernel retarget_global(CUtensorMap, CUtensorMap*, const float*, const float*, float*)
// @launch --arch sm_90a --grid 2 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg u8:256 --arg buf:4000 --arg buf:4000:iota --arg buf:1024
// @expect clean
// Each block's thread 0 copies the map it was given to its own map in global memory, points the copy at
// `other` in place with tensormap.replace, releases its writes to the tensormap proxy and acquires the map
// before its TMA load through it. Twin: replace_in_global_unfenced.cu.
#include <cuda.h>
#include "tensormap_ptx.cuh"

__global__ void retarget_global(const __grid_constant__ CUtensorMap map, CUtensorMap* gmaps, const float* tensor,
                                const float* other, float* out)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ alignas(8) unsigned long long bar;
    CUtensorMap* gmap = gmaps + blockIdx.x;
    if (threadIdx.x == 0) {
        *gmap = map;
        map_replace_address_global(gmap, other);
        map_release();
        bar_init(&bar, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        map_acquire(gmap);
        bar_arrive_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, gmap, 32 * blockIdx.x, 8, &bar);
    }
    bar_wait(&bar, 0);
    out[512 * blockIdx.x + threadIdx.x] = tile[threadIdx.x / 32][threadIdx.x % 32];
}
