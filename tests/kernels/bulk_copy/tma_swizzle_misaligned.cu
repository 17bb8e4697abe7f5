// @kernel swizzle_misaligned(CUtensorMap, float*, const float*)
// @shared swizzle_misaligned 2184
// @barriers swizzle_misaligned 18
// @launch --arch sm_90a --grid 1 --block 32 --arg tensormap:f32:16x32:16x32:2:swizzle=128B --arg buf:32 --arg buf:512:iota
// @expect clean
// A 128-byte-swizzled TMA load into shared memory 128 bytes past a 1024-byte boundary: the swizzle permutes
// the bits of the shared address, so the box's row 0 lands where row 1 of an aligned pattern would, its
// 16-byte chunks swapped in pairs (tests/sim/test_tma_swizzle.py reads them back).
#include <cuda.h>
#include "bulk_ptx.cuh"

__global__ void swizzle_misaligned(const __grid_constant__ CUtensorMap map, float* out, const float* tensor)
{
    __shared__ alignas(1024) float buffer[32 + 16 * 32];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0)
        bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_arrive_expect_tx(&bar, 16 * 32 * sizeof(float));
        tma_load_2d(buffer + 32, &map, 0, 0, &bar);
    }
    bar_wait(&bar, 0);
    out[threadIdx.x] = buffer[32 + threadIdx.x];
}
