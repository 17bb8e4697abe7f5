// @kernel gemm(const __half*, const __half*, float*)
// @shared gemm 2304
// @barriers gemm 21
// @launch --arch sm_90a --grid 2 --block 128 --arg buf:2048:rand --arg buf:256:rand --arg buf:1024
// @expect clean
// One warpgroup per block computes D (64x8, f32) = A (64x16) * B (16x8) with one wgmma: the threads lay A
// (row-major in `a`) and B (column-major in `b`: 8 columns of 16) out as core matrices in shared memory,
// fence them for the async proxy, and after the wait store thread t's four accumulators to
// out[512 * block + 8 * row + col]. Twins: mma_read_before_wait.cu, mma_operand_overwrite.cu.
#include <cuda_fp16.h>
#include "wgmma_ptx.cuh"

__global__ void gemm(const __half* a, const __half* b, float* out)
{
    __shared__ alignas(128) __half sa[64 * 16];
    __shared__ alignas(128) __half sb[8 * 16];
    for (int i = threadIdx.x; i < 64 * 16; i += 128)
        sa[core_offset(i / 16, i % 16)] = a[1024 * blockIdx.x + i];
    sb[core_offset(threadIdx.x / 16, threadIdx.x % 16)] = b[128 * blockIdx.x + threadIdx.x];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    fence_operands(d);
    wgmma_fence();
    wgmma_m64n8k16(d, descriptor(sa, 128, 256), descriptor(sb, 128, 256));
    wgmma_commit();
    wgmma_wait_all();
    int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    for (int i = 0; i < 4; ++i)
        out[512 * blockIdx.x + 8 * (16 * warp + g + 8 * (i / 2)) + 2 * t + i % 2] = d[i];
}
