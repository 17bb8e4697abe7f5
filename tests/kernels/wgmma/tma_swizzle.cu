// @kernel tma_swizzle(CUtensorMap, CUtensorMap, float*, const __half*, const __half*)
// @shared tma_swizzle 16392
// @barriers tma_swizzle 22
// @launch --arch sm_90a --grid 1 --block 128 --arg tensormap:f16:64x64:64x64:3:swizzle=128B --arg tensormap:f16:64x64:64x64:4:swizzle=128B --arg buf:4096 --arg buf:4096:rand --arg buf:4096:rand
// @expect clean
// Triton's and CUTLASS's Hopper pattern: TMA loads A (64x64, row-major: K-major) and B (64x64 by rows of K:
// MN-major) through 128-byte swizzled tensor maps, and four m64n64k16 products read them through
// 128-byte swizzle descriptors (B transposed), A's advancing 32 bytes into its swizzled rows, B's 1024 bytes
// per 8 k. out[64 * row + col] is A * B (tests/sim/test_wgmma.py). Twin: tma_swizzle_no_wait.cu.
#include <cuda.h>
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

__global__ void tma_swizzle(const __grid_constant__ CUtensorMap amap, const __grid_constant__ CUtensorMap bmap, float* out,
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
    bar_wait(&bar, 0);
    float d[32] = {};
    product_sw128(d, sa, sb);
    store_d64(out, d);
}
