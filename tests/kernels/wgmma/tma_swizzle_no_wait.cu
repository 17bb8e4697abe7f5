// @kernel tma_swizzle_no_wait(CUtensorMap, CUtensorMap, float*, const __half*, const __half*)
// @shared tma_swizzle_no_wait 17416
// @barriers tma_swizzle_no_wait 23
// @launch --arch sm_90a --grid 1 --block 128 --arg tensormap:f16:64x64:64x64:3:swizzle=128B --arg tensormap:f16:64x64:64x64:4:swizzle=128B --arg buf:4096 --arg buf:4096:rand --arg buf:4096:rand
// @expect data-race shared 26 35
// @expect data-race shared 27 35
// @expect uninitialized-read shared 35
// tma_swizzle.cu without the mbarrier wait: the products read the swizzled tiles while the TMA copies may
// still be writing them.
#include <cuda.h>
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

__global__ void tma_swizzle_no_wait(const __grid_constant__ CUtensorMap amap, const __grid_constant__ CUtensorMap bmap, float* out,
                            const __half* a, const __half* b)
{
    __shared__ alignas(1024) __half sa[64 * 64];
    __shared__ alignas(1024) __half sb[64 * 64];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned mode = 1;
    if (threadIdx.x == 0)
        bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_arrive_expect_tx(&bar, sizeof(sa) + sizeof(sb));
        tma_load_2d(sa, &amap, 0, 0, &bar);
        tma_load_2d(sb, &bmap, 0, 0, &bar);
    }
    float d[32] = {};
    fence_operands64(d);
    wgmma_fence();
    for (int k0 = 0; k0 < 64; k0 += 16) {
        unsigned long long da = descriptor(smem(sa) + tile_step(k0, 64, mode, false), lbo_of(mode, false, 64), sbo_of(mode, false), mode);
        unsigned long long db = descriptor(smem(sb) + tile_step(k0, 64, mode, true), lbo_of(mode, true, 64), sbo_of(mode, true), mode);
        wgmma_m64n64k16(d, da, db, 0, 1);
    }
    wgmma_commit();
    wgmma_wait_all();
    int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    for (int i = 0; i < 32; ++i)
        out[64 * (16 * warp + g + 8 * (i / 2 % 2)) + 8 * (i / 4) + 2 * t + i % 2] = d[i];
}
