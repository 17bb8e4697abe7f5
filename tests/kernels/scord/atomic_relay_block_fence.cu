// @kernel relay(unsigned int*, int*)
// @atomics relay 22:or.gpu 26:add.cta 28:add.gpu 30:add.cta 32:add.gpu 36:exch.gpu
// @fences relay 35:cta
// @launch --grid 2 --block 64 --arg buf:2 --arg buf:1
// @expect data-race global 28 30 error
// @expect data-race global 26 32 error
// @expect_ptx data-race global 28 30 error
// @expect_ptx data-race global 26 32 error
// @expect_scord data-race global 28 30 error
// @expect_scord data-race global 26 32 error
// ScoR category: atomics, HRD-indirect, insufficient scope. As
// atomic_relay_unfenced_reads.cu, but stage 1 passes the turn to block 1
// after a block-scope fence, which does not reach block 1: the block-scope
// adds of block 1 race with block 0's under every model, whatever fence
// block 1 would add after its flag reads (error).
__global__ void relay(unsigned int* total, int* turn)
{
    int me = blockIdx.x * 2 + threadIdx.x / 32;
    if (threadIdx.x % 32 != 0)
        return;
    if (me > 0) {
        while (atomicOr(turn, 0) != me) {
        }
    }
    if (me == 0)
        atomicAdd_block(&total[1], 1u);
    else if (me == 1)
        atomicAdd(&total[0], 2u);
    else if (me == 2)
        atomicAdd_block(&total[0], 4u);
    else
        atomicAdd(&total[1], 8u);
    if (me == 3)
        return;
    __threadfence_block();
    atomicExch(turn, me + 1);
}
