// @kernel tma_swizzle_no_wait(CUtensorMap, CUtensorMap, float*, const __half*, const __half*)
// @shared tma_swizzle_no_wait 16392
// @barriers tma_swizzle_no_wait 22
// @launch --arch sm_90a --grid 1 --block 128 --arg tensormap:f16:64x64:64x64:3:swizzle=128B --arg tensormap:f16:64x64:64x64:4:swizzle=128B --arg buf:4096 --arg buf:4096:rand --arg buf:4096:rand
// @expect data-race shared 25 29
// @expect data-race shared 26 29
// @expect uninitialized-read shared 29
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
    if (threadIdx.x == 0)
        bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_arrive_expect_tx(&bar, sizeof(sa) + sizeof(sb));
        tma_load_2d(sa, &amap, 0, 0, &bar);
        tma_load_2d(sb, &bmap, 0, 0, &bar);
    }
    float d[32] = {};
    product_sw128(d, sa, sb);
    store_d64(out, d);
}
