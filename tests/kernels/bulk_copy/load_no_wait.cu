// @kernel reverse(const float*, float*)
// @shared reverse 1032
// @barriers reverse 17
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect data-race shared 20 22
// @expect uninitialized-read shared 22
// load_wait.cu without the wait for the mbarrier phase: every thread reads the tile while the bulk copy
// may still be writing it.
#include "bulk_ptx.cuh"

__global__ void reverse(const float* in, float* out)
{
    __shared__ alignas(16) float tile[256];
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0)
        bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_arrive_expect_tx(&bar, sizeof(tile));
        bulk_load(tile, in + 256 * blockIdx.x, sizeof(tile), &bar);
    }
    out[256 * blockIdx.x + threadIdx.x] = tile[255 - threadIdx.x];
}
