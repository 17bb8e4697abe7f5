// @kernel handoff(CUtensorMap, CUtensorMap*, const float*, const float*, unsigned*, float*)
// @launch --arch sm_90a --grid 2 --block 32 --arg tensormap:f32:40x100:16x32:2 --arg u8:128 --arg buf:4000 --arg buf:4000:iota --arg buf:1 --arg buf:512
// @expect data-race global 18 28
// @expect data-race global 19 28
// handoff.cu with the release at .cta scope: it does not include block 1, whose TMA load reads the map
// through the tensormap proxy, so neither the copy of the map nor the new address is released to it.
#include <cuda.h>
#include "tensormap_ptx.cuh"

__global__ void handoff(const __grid_constant__ CUtensorMap map, CUtensorMap* gmap, const float* tensor,
                        const float* other, unsigned* flag, float* out)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 0) {
        *gmap = map;
        map_replace_address_global(gmap, other);
        map_release_cta();
        flag_release(flag);
        return;
    }
    flag_acquire(flag);
    map_acquire(gmap);
    bar_init(&bar, 1);
    bar_arrive_expect_tx(&bar, sizeof(tile));
    tma_load_2d(tile, gmap, 0, 8, &bar);
    bar_wait(&bar, 0);
    for (int i = 0; i < 512; i++)
        out[i] = tile[i / 32][i % 32];
}
