// Thin wrappers over the sm_90a warpgroup matrix instructions, written in inline PTX as hand-written Hopper
// kernels do, for one m64n8k16 product with f32 accumulators and f16 operands read through no-swizzle
// matrix descriptors.
#pragma once

__device__ __forceinline__ unsigned smem(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

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
