// @kernel produce_consume(const float*, float*)
// @launch --arch compute_90 --grid 2 --block 64 --arg buf:256:iota --arg buf:128
// @expect data-race shared 30 34
// @expect deadlock shared 11 22
// producer_consumer.cu with the consumers waiting for the wrong parity of `full`, (r & 1) ^ 1. The ISA reads a
// parity as the current phase or the one before it: in round 0, parity 1 names the phase before phase 0, so
// the wait succeeds at once and the read races with the producers' write. If the producers have arrived first,
// parity 1 names phase 1, which needs the producers' next round, which needs the consumers' arrival on
// `empty`: a deadlock (lines of the wait and the init in mbarrier_ptx.cuh). Which one happens depends on the
// schedule; the default schedules show both.
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
            bar_wait(&full, (r & 1) ^ 1);
            out[base + lane] = tile[31 - lane];
            bar_arrive(&empty);
        }
    }
}
