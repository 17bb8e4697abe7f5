// Thin wrappers over the sm_90a warpgroup matrix instructions, written in inline PTX as hand-written Hopper
// kernels do: m64n8k16 and m64n64k16 products with f32 accumulators and f16 operands read through matrix
// descriptors, in the PTX ISA's canonical shared-memory layouts (K-major or MN-major, swizzled or not).
#pragma once
#include "../bulk_copy/bulk_ptx.cuh"  // smem(), and the TMA and mbarrier wrappers that feed wgmma

// A no-swizzle matrix descriptor: start address, leading (K) and stride (M or N) byte offsets, each >> 4
__device__ __forceinline__ unsigned long long descriptor(const void* p, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((smem(p) & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32);
}

// Where element (r, k) of a K-major operand of 16 k lies: core matrices of 8 rows x 8 halves, 128 bytes
// each, the two of a row band side by side (LBO 128), row bands 256 bytes apart (SBO 256)
__device__ __forceinline__ int core_offset(int r, int k)
{
    return (r / 8) * 128 + (k / 8) * 64 + (r % 8) * 8 + (k % 8);
}

// Pins the accumulators' values in registers here: without it the compiler may move their initialisation
// past wgmma_fence(), and the product would read registers written after the fence
__device__ __forceinline__ void fence_operands(float (&d)[4])
{
    for (int i = 0; i < 4; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_wait_all()
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

// d (four f32 per thread) = A * B + d, A and B through descriptors; a macro, so that reports name the
// kernel's line
#define wgmma_m64n8k16(d, desc_a, desc_b)                                                                      \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"                                                  \
                 " wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                             \
                 : "l"(desc_a), "l"(desc_b)                                                                    \
                 : "memory")

// A matrix descriptor with a swizzle mode (0 none, 1 128-byte, 2 64-byte, 3 32-byte) and byte offsets
__device__ __forceinline__ unsigned long long descriptor(unsigned start, unsigned lbo, unsigned sbo, unsigned mode)
{
    return (unsigned long long)((start & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | ((unsigned long long)mode << 62);
}

// The swizzle span in bytes of a descriptor's swizzle mode (0 for none)
__device__ __forceinline__ unsigned span_of(unsigned mode)
{
    return mode ? 256u >> mode : 0u;
}

// The leading and stride byte offsets of a 64 x 64 operand (64 rows of M or N by 64 k) laid out by
// `tile_offset`: no swizzle, K-major: core matrices along K 128 bytes apart, row bands 1024 apart; no
// swizzle, MN-major: core matrices along M/N 128 bytes apart, along K 1024 apart; swizzled, K-major: rows of
// `span` bytes, row bands 8 * span apart (LBO unused); swizzled, MN-major: k-rows of `span` bytes, bands of
// 8 k 8 * span apart, blocks of span / 2 rows 64 * span apart
__device__ __forceinline__ unsigned lbo_of(unsigned mode, bool mn_major)
{
    unsigned span = span_of(mode);
    return mn_major ? (span ? 64 * span : 1024) : (span ? 16 : 128);
}

__device__ __forceinline__ unsigned sbo_of(unsigned mode, bool mn_major)
{
    unsigned span = span_of(mode);
    return span ? 8 * span : (mn_major ? 128 : 1024);
}

// Byte offset, from a 1024-byte aligned tile, of element (r, k) of such an operand (r its row of M or column
// of N); with a swizzle the 16-byte chunk of each 128-byte row moves to chunk ^ (row % (span / 16)), as TMA
// places it. K-major swizzled tiles hold span / 2 k per row, the next k 64 * span bytes on.
__device__ __forceinline__ unsigned tile_offset(int r, int k, unsigned mode, bool mn_major)
{
    unsigned span = span_of(mode), e = span / 2, off;
    if (!span)
        off = mn_major ? (r / 8) * 128 + (k / 8) * 1024 + (k % 8) * 16 + (r % 8) * 2
                       : (r / 8) * 1024 + (k / 8) * 128 + (r % 8) * 16 + (k % 8) * 2;
    else
        off = mn_major ? (r / e) * 64 * span + (k / 8) * 8 * span + (k % 8) * span + (r % e) * 2
                       : (k / e) * 64 * span + (r / 8) * 8 * span + (r % 8) * span + (k % e) * 2;
    return span ? off ^ (((off >> 7) & (span / 16 - 1)) << 4) : off;
}

// The descriptor of the product over k = k0..k0+15 of such a tile: its start moves k0 into the tile (32 bytes
// into a 128-byte swizzled row for k0 = 16, as CUTLASS and Triton advance it)
__device__ __forceinline__ unsigned long long tile_descriptor(const void* tile, int k0, unsigned mode, bool mn_major)
{
    unsigned span = span_of(mode), e = span / 2, step;
    if (!span)
        step = mn_major ? (k0 / 8) * 1024 : (k0 / 8) * 128;
    else
        step = mn_major ? (k0 / 8) * 8 * span : (k0 / e) * 64 * span + (k0 % e) * 2;
    return descriptor(smem(tile) + step, lbo_of(mode, mn_major), sbo_of(mode, mn_major), mode);
}

// Thread t's 32 accumulators of a 64 x 64 D (m64n64k16's layout) to out[64 * row + col]
__device__ __forceinline__ void store_d64(float* out, const float (&d)[32])
{
    int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    for (int i = 0; i < 32; ++i)
        out[64 * (16 * warp + g + 8 * (i / 2 % 2)) + 8 * (i / 4) + 2 * t + i % 2] = d[i];
}

__device__ __forceinline__ void fence_operands64(float (&d)[32])
{
    for (int i = 0; i < 32; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

// d (32 f32 per thread) = A * B + d for m64n64k16, A and B through descriptors, transposed (MN-major) as the
// immediates TA and TB say
#define wgmma_m64n64k16(d, desc_a, desc_b, TA, TB)                                                             \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"                                                  \
                 " wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},"                                  \
                 " %32, %33, p, 1, 1, " #TA ", " #TB ";\n}"                                                     \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                                                                       \
                 : "l"(desc_a), "l"(desc_b)                                                                    \
                 : "memory")

// D (32 f32 per thread, zero) = A * B over 64 k for 128-byte swizzled 64 x 64 tiles, A K-major and B MN-major
// (Triton's layout): four m64n64k16 from wgmma.fence to wgmma.wait_group 0; a macro, so that reports name
// the kernel's line
#define product_sw128(d, sa, sb)                                                                               \
    do {                                                                                                       \
        fence_operands64(d);                                                                                   \
        wgmma_fence();                                                                                         \
        for (int k0 = 0; k0 < 64; k0 += 16)                                                                    \
            wgmma_m64n64k16(d, tile_descriptor(sa, k0, 1, false), tile_descriptor(sb, k0, 1, true), 0, 1);     \
        wgmma_commit();                                                                                        \
        wgmma_wait_all();                                                                                      \
    } while (0)
