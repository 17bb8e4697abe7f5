// @kernel relay(volatile int*, int*, int*)
// @atomics relay 18:or.gpu 31:exch.gpu
// @fences relay 20:gpu 28:cta 30:gpu
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --arg buf:1
// @expect clean
// @expect_ptx clean
// @expect_scord clean
// ScoR category: fence, HRF-indirect (inter-warp then inter-block). Warp 0
// of block 0 updates the value and passes it on with a block-scope fence
// (enough: the next owner is in its block); warp 1 of block 0 updates it and
// passes it on with a device-scope fence to warp 0 of block 1, which reads
// it. Synchronisation is transitive, so no model reports a race.
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
    if (me == 0)
        __threadfence_block();
    else
        __threadfence();
    atomicExch(turn, me + 1);
}
