// @kernel produce_consume(const float*, float*)
// @launch --arch compute_90 --grid 2 --block 64 --arg buf:256:iota --arg buf:128
// @expect clean
// Warp 0 produces a 32-float tile per round, warp 1 consumes it, through two mbarriers of 32 arrivals each:
// `full` (the producers arrive once the tile is written; the consumers wait for its phase) and `empty` (the
// consumers arrive once they have read it; the producers wait before overwriting it). Round r waits for phase
// r of `full` (parity r & 1) and, from round 1 on, for phase r - 1 of `empty`. Consumer lane l of block b
// writes out[(2b + r) * 32 + l] = in[(2b + r) * 32 + 31 - l]. Twins: producer_consumer_no_wait.cu,
// producer_consumer_wrong_parity.cu.
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
            bar_wait(&full, r & 1);
            out[base + lane] = tile[31 - lane];
            bar_arrive(&empty);
        }
    }
}
