// @kernel layouts_tf32(const float*, const float*, float*, unsigned int)
// @shared layouts_tf32 16384
// @barriers layouts_tf32 45
// @launch --arch sm_90a --grid 1 --block 128 --arg buf:8192:rand --arg buf:8192:rand --arg buf:16384 --arg 1
// @expect clean
// D (64x64, f32) = A (64x32) * B (32x64) in tf32 with four m64n64k8 products, both operands K-major in shared
// memory, unswizzled (`mode` 0: core matrices of 8 rows x 4 tf32, LBO 128, SBO 1024) or 128-byte swizzled
// (`mode` 1: one 128-byte row per row of M or N, SBO 1024). `a` is A row-major (m, k), `b` is B by columns
// (n, k); out[64 * row + col] is D. tests/sim/test_wgmma.py checks it against NumPy in tf32.
#include "wgmma_ptx.cuh"

// Byte offset of element (r, k) of a 64 x 32 tf32 tile
__device__ __forceinline__ unsigned tf32_offset(int r, int k, unsigned mode)
{
    if (!mode)
        return (r / 8) * 1024 + (k / 4) * 128 + (r % 8) * 16 + (k % 4) * 4;
    unsigned off = (r / 8) * 1024 + (r % 8) * 128 + k * 4;
    return off ^ (((off >> 7) & 7) << 4);
}

// The descriptor of the product over k = k0..k0+7
__device__ __forceinline__ unsigned long long tf32_descriptor(const void* tile, int k0, unsigned mode)
{
    unsigned step = mode ? k0 * 4 : (k0 / 4) * 128;
    return descriptor(smem(tile) + step, mode ? 16 : 128, 1024, mode);
}

#define wgmma_m64n64k8_tf32(d, desc_a, desc_b)                                                                 \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"                                                  \
                 " wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},"                                  \
                 " %32, %33, p, 1, 1;\n}"                                                                      \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                                                                       \
                 : "l"(desc_a), "l"(desc_b)                                                                    \
                 : "memory")

__global__ void layouts_tf32(const float* a, const float* b, float* out, unsigned mode)
{
    __shared__ alignas(1024) float sa[64 * 32];
    __shared__ alignas(1024) float sb[64 * 32];
    for (int i = threadIdx.x; i < 64 * 32; i += 128) {
        sa[tf32_offset(i / 32, i % 32, mode) / 4] = a[i];
        sb[tf32_offset(i / 32, i % 32, mode) / 4] = b[i];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[32] = {};
    fence_operands64(d);
    wgmma_fence();
    for (int k0 = 0; k0 < 32; k0 += 8)
        wgmma_m64n64k8_tf32(d, tf32_descriptor(sa, k0, mode), tf32_descriptor(sb, k0, mode));
    wgmma_commit();
    wgmma_wait_all();
    store_d64(out, d);
}
