// @kernel int8_s32(const signed char*, const unsigned char*, int*, unsigned int)
// @kernel fp8_f32(const unsigned char*, const unsigned char*, float*, unsigned int)
// @kernel fp8_f16(const unsigned char*, const unsigned char*, unsigned int*, unsigned int)
// @shared int8_s32 4608
// @shared fp8_f32 4608
// @shared fp8_f16 4608
// @barriers int8_s32 42
// @barriers fp8_f32 42
// @barriers fp8_f16 42
// @launch --arch sm_90a --kernel int8_s32 --grid 1 --block 128 --arg buf:4096:rand --arg buf:512:rand --arg buf:512 --arg 0
// @expect clean
// D (64x8) = A (64x64) * B (64x8) of 8-bit inputs with two m64n8k32 products, both operands K-major in shared
// memory, unswizzled (`mode` 0: core matrices of 8 rows x 16 bytes, LBO 128, SBO 512) or 64-byte swizzled
// (`mode` 1: one 64-byte row per row of M or N, SBO 512): s8 x u8 into s32, e4m3 x e5m2 into f32, e4m3 x e4m3
// into f16 (two to a register). `a` is A row-major (m, k), `b` is B by columns (n, k); out holds D row by
// row (as f16 pairs for fp8_f16). tests/sim/test_wgmma.py checks each against NumPy.
#include "wgmma_ptx.cuh"

// Byte offset of element (r, k) of a K-major tile of 64 one-byte k per row
__device__ __forceinline__ unsigned byte_offset(int r, int k, unsigned mode)
{
    if (!mode)
        return (r / 8) * 512 + (k / 16) * 128 + (r % 8) * 16 + k % 16;
    unsigned off = (r / 8) * 512 + (r % 8) * 64 + k;
    return off ^ (((off >> 7) & 3) << 4);
}

// The descriptor of the product over k = k0..k0+31
__device__ __forceinline__ unsigned long long byte_descriptor(const void* tile, int k0, unsigned mode)
{
    return descriptor(smem(tile) + (mode ? k0 : (k0 / 16) * 128), mode ? 16 : 128, 512, mode ? 2 : 0);
}

// A (64 x 64 bytes) and B (8 x 64 bytes) to shared memory, then visible to the async proxy
__device__ __forceinline__ void load_tiles(unsigned char* sa, unsigned char* sb, const void* a, const void* b, unsigned mode)
{
    for (int i = threadIdx.x; i < 64 * 64; i += 128)
        sa[byte_offset(i / 64, i % 64, mode)] = ((const unsigned char*)a)[i];
    for (int i = threadIdx.x; i < 8 * 64; i += 128)
        sb[byte_offset(i / 64, i % 64, mode)] = ((const unsigned char*)b)[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
}

// Row and column of element i of this thread's m64n8 D
__device__ __forceinline__ int d_row(int i) { return 16 * (threadIdx.x / 32) + threadIdx.x % 32 / 4 + 8 * (i / 2 % 2); }
__device__ __forceinline__ int d_col(int i) { return 2 * (threadIdx.x % 4) + i % 2; }

__global__ void int8_s32(const signed char* a, const unsigned char* b, int* out, unsigned mode)
{
    __shared__ alignas(1024) unsigned char sa[64 * 64];
    __shared__ alignas(512) unsigned char sb[8 * 64];
    load_tiles(sa, sb, a, b, mode);
    int d[4] = {};
    for (int i = 0; i < 4; ++i)
        asm volatile("" : "+r"(d[i])::"memory");
    wgmma_fence();
    for (int k0 = 0; k0 < 64; k0 += 32)
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
                     " wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8 {%0, %1, %2, %3}, %4, %5, p;\n}"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "l"(byte_descriptor(sa, k0, mode)), "l"(byte_descriptor(sb, k0, mode))
                     : "memory");
    wgmma_commit();
    wgmma_wait_all();
    for (int i = 0; i < 4; ++i)
        out[8 * d_row(i) + d_col(i)] = d[i];
}

__global__ void fp8_f32(const unsigned char* a, const unsigned char* b, float* out, unsigned mode)
{
    __shared__ alignas(1024) unsigned char sa[64 * 64];
    __shared__ alignas(512) unsigned char sb[8 * 64];
    load_tiles(sa, sb, a, b, mode);
    float d[4] = {};
    fence_operands(d);
    wgmma_fence();
    for (int k0 = 0; k0 < 64; k0 += 32)
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
                     " wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 {%0, %1, %2, %3}, %4, %5, p, 1, 1;\n}"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "l"(byte_descriptor(sa, k0, mode)), "l"(byte_descriptor(sb, k0, mode))
                     : "memory");
    wgmma_commit();
    wgmma_wait_all();
    for (int i = 0; i < 4; ++i)
        out[8 * d_row(i) + d_col(i)] = d[i];
}

__global__ void fp8_f16(const unsigned char* a, const unsigned char* b, unsigned* out, unsigned mode)
{
    __shared__ alignas(1024) unsigned char sa[64 * 64];
    __shared__ alignas(512) unsigned char sb[8 * 64];
    load_tiles(sa, sb, a, b, mode);
    unsigned d[2] = {};
    for (int i = 0; i < 2; ++i)
        asm volatile("" : "+r"(d[i])::"memory");
    wgmma_fence();
    for (int k0 = 0; k0 < 64; k0 += 32)
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
                     " wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3 {%0, %1}, %2, %3, p, 1, 1;\n}"
                     : "+r"(d[0]), "+r"(d[1])
                     : "l"(byte_descriptor(sa, k0, mode)), "l"(byte_descriptor(sb, k0, mode))
                     : "memory");
    wgmma_commit();
    wgmma_wait_all();
    for (int j = 0; j < 2; ++j)  // register j: the f16 pair at row d_row(2j), columns d_col(0), d_col(1)
        out[4 * d_row(2 * j) + threadIdx.x % 4] = d[j];
}
