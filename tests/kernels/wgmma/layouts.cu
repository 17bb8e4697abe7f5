// @kernel layouts(const __half*, const __half*, float*, unsigned int, int)
// @shared layouts 16384
// @barriers layouts 27
// @launch --arch sm_90a --grid 1 --block 128 --arg buf:4096:rand --arg buf:4096:rand --arg buf:4096 --arg 1 --arg 2
// @expect clean
// D (64x64, f32) = A (64x64) * B (64x64) with four m64n64k16 products, the operands in shared memory in the
// canonical layout of swizzle mode `mode` (0 none, 1 128-byte, 2 64-byte, 3 32-byte; wgmma_ptx.cuh's
// tile_offset), A MN-major when bit 0 of `trans` is set, B when bit 1 is (K-major otherwise). `a` is A
// row-major (m, k), `b` is B by columns (n, k); out[64 * row + col] is D. Each product's descriptors start k0
// into the tiles (32 bytes into a 128-byte swizzled row for k0 = 16, as CUTLASS and Triton advance them).
// tests/sim/test_wgmma.py runs each mode and each `trans` against NumPy. Twin: layouts_overwrite.cu.
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

#define PRODUCT(TA, TB) wgmma_m64n64k16(d, da, db, TA, TB)

__global__ void layouts(const __half* a, const __half* b, float* out, unsigned mode, int trans)
{
    __shared__ alignas(1024) __half sa[64 * 64];
    __shared__ alignas(1024) __half sb[64 * 64];
    bool ta = trans & 1, tb = trans & 2;
    for (int i = threadIdx.x; i < 64 * 64; i += 128) {
        sa[tile_offset(i / 64, i % 64, mode, ta) / 2] = a[i];
        sb[tile_offset(i / 64, i % 64, mode, tb) / 2] = b[i];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[32] = {};
    fence_operands64(d);
    wgmma_fence();
    for (int k0 = 0; k0 < 64; k0 += 16) {
        unsigned long long da = tile_descriptor(sa, k0, mode, ta), db = tile_descriptor(sb, k0, mode, tb);
        switch (trans) {
        case 0: PRODUCT(0, 0); break;
        case 1: PRODUCT(1, 0); break;
        case 2: PRODUCT(0, 1); break;
        default: PRODUCT(1, 1); break;
        }
    }
    wgmma_commit();
    wgmma_wait_all();
    store_d64(out, d);
}
