// @kernel cp_async_unfenced(const __half*, const __half*, float*)
// @shared cp_async_unfenced 16384
// @barriers cp_async_unfenced 25
// @launch --arch sm_90a --grid 1 --block 128 --arg buf:4096:rand --arg buf:4096:rand --arg buf:4096
// @expect data-race shared 19 27
// @expect data-race shared 21 27
// cp_async_fenced.cu without the fence.proxy.async: the copies' writes are generic-proxy writes, and no proxy
// fence lies between them and the products' async-proxy reads.
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

__global__ void cp_async_unfenced(const __half* a, const __half* b, float* out)
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
    float d[32] = {};
    product_sw128(d, sa, sb);
    store_d64(out, d);
}
