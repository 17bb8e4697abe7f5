// @kernel cp_async_fenced(const __half*, const __half*, float*)
// @shared cp_async_fenced 16384
// @barriers cp_async_fenced 27
// @launch --arch sm_90a --grid 1 --block 128 --arg buf:4096:rand --arg buf:4096:rand --arg buf:4096
// @expect clean
// Triton's Hopper pipeline in CUDA: cp.async copies A (row-major) and B (by rows of K) 16 bytes at a time into
// 128-byte swizzled tiles, each thread waits for its copies, a barrier orders all of them, and then every
// thread executes fence.proxy.async before the products read the tiles through the async proxy: the fence
// after the barrier covers the other threads' copies too (the PTX memory model wants a proxy fence on the
// path from write to read). Twin: cp_async_unfenced.cu.
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

__global__ void cp_async_fenced(const __half* a, const __half* b, float* out)
{
    __shared__ alignas(1024) __half sa[64 * 64];
    __shared__ alignas(1024) __half sb[64 * 64];
    const unsigned mode = 1;
    for (int c = threadIdx.x; c < 64 * 8; c += 128) {  // chunk c: row c / 8, elements 8 (c % 8)..
        int r = c / 8, k = 8 * (c % 8);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(sa) + tile_offset(r, k, mode, false)),
                     "l"(a + 64 * r + k) : "memory");
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(sb) + tile_offset(k, r, mode, true)),
                     "l"(b + 64 * r + k) : "memory");
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    float d[32] = {};
    product_sw128(d, sa, sb);
    store_d64(out, d);
}
