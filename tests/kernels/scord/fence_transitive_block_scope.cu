// @kernel relay(volatile int*, int*, int*)
// @atomics relay 18:or.gpu 28:exch.gpu
// @fences relay 20:gpu 27:cta
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --arg buf:1
// @expect data-race global 23 26 warning
// @expect_ptx clean
// @expect_scord data-race global 23 26 error
// ScoR category: fence, HRF-indirect, insufficient scope. As
// fence_transitive.cu, but warp 1 of block 0 hands the value to block 1 after
// a block-scope fence, which does not reach block 1. ScoRD: device-scope race
// between the update and block 1's read (error). PTX: the volatile accesses
// are strong (clean). CUDA default: volatile is not atomic (warning).
__global__ void relay(volatile int* value, int* turn, int* out)
{
    int me = blockIdx.x * 2 + threadIdx.x / 32;
    if (threadIdx.x % 32 != 0 || me > 2) return;
    if (me > 0) {
        while (atomicOr(turn, 0) != me) {
        }
        __threadfence();
    }
    if (me == 2) {
        *out = *value;
        return;
    }
    *value += me + 1;
    __threadfence_block();
    atomicExch(turn, me + 1);
}
