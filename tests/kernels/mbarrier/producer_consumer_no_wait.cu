// @kernel produce_consume(const float*, float*)
// @launch --arch compute_90 --grid 2 --block 64 --arg buf:256:iota --arg buf:128
// @expect data-race shared 28 31
// @expect deadlock shared 11 22
// producer_consumer.cu without the consumers' wait for `full`: they read the tile while the producers may still
// be writing it (a race). Running ahead, they can also complete two phases of `empty` before the producers wait
// for parity 0 of it; that parity then names phase 2, which never completes (a deadlock, shown by one of the
// default schedules; the deadlock's lines are the wait and the init in mbarrier_ptx.cuh).
#include "mbarrier_ptx.cuh"

#define ROUNDS 2

__global__ void produce_consume(const float* in, float* out)
{
    __shared__ float tile[32];
    __shared__ unsigned long long full, empty;
    int lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        bar_init(&full, 32);
        bar_init(&empty, 32);
    }
    __syncthreads();
    for (int r = 0; r < ROUNDS; ++r) {
        int base = (blockIdx.x * ROUNDS + r) * 32;
        if (threadIdx.x < 32) {
            if (r > 0)
                bar_wait(&empty, (r - 1) & 1);
            tile[lane] = in[base + lane];
            bar_arrive(&full);
        } else {
            out[base + lane] = tile[31 - lane];
            bar_arrive(&empty);
        }
    }
}
