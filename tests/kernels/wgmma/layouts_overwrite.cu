// @kernel layouts_overwrite(const __half*, const __half*, float*)
// @shared layouts_overwrite 16384
// @barriers layouts_overwrite 21
// @launch --arch sm_90a --grid 1 --block 128 --arg buf:4096:rand --arg buf:4096:rand --arg buf:4096
// @expect data-race shared 26 29
// layouts.cu's product in Triton's layout (128-byte swizzle, A K-major, B MN-major), with the threads clearing
// B's first k-rows before wgmma.wait_group: the warpgroup may still be reading them.
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

__global__ void layouts_overwrite(const __half* a, const __half* b, float* out)
{
    __shared__ alignas(1024) __half sa[64 * 64];
    __shared__ alignas(1024) __half sb[64 * 64];
    const unsigned mode = 1;
    for (int i = threadIdx.x; i < 64 * 64; i += 128) {
        sa[tile_offset(i / 64, i % 64, mode, false) / 2] = a[i];
        sb[tile_offset(i / 64, i % 64, mode, true) / 2] = b[i];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[32] = {};
    fence_operands64(d);
    wgmma_fence();
    for (int k0 = 0; k0 < 64; k0 += 16) {
        wgmma_m64n64k16(d, tile_descriptor(sa, k0, mode, false), tile_descriptor(sb, k0, mode, true), 0, 1);
    }
    wgmma_commit();
    sb[threadIdx.x] = __float2half(0.0f);
    wgmma_wait_all();
    store_d64(out, d);
}
