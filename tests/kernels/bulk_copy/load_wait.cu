// @kernel reverse(const float*, float*)
// @shared reverse 1032
// @barriers reverse 17
// @launch --arch sm_90a --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect clean
// Thread 0 of each block loads the block's 1 KiB tile with one bulk copy that completes through the
// mbarrier's tx-count; every thread waits for the phase before reading the tile. Thread t of block b writes
// out[256b + t] = in[256b + 255 - t]. Twin: load_no_wait.cu.
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
    bar_wait(&bar, 0);
    out[256 * blockIdx.x + threadIdx.x] = tile[255 - threadIdx.x];
}
