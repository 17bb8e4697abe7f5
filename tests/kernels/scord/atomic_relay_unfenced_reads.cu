// @kernel relay(unsigned int*, int*)
// @atomics relay 28:or.gpu 32:add.cta 34:add.gpu 36:add.cta 38:add.gpu 45:exch.gpu
// @fences relay 42:gpu 44:cta
// @launch --grid 2 --block 64 --arg buf:2 --arg buf:1
// @expect data-race global 34 36 warning
// @expect data-race global 32 38 warning
// @expect_ptx data-race global 34 36 error
// @expect_ptx data-race global 32 38 error
// @expect_scord clean
// ScoR category: atomics, HRD-indirect (inter-warp then inter-block). Four
// stages, lane 0 of warps 0 and 1 of block 0, then of block 1, pass a turn
// along with atomics; each stage adds to a counter with the scope of its
// neighbours, and no stage fences after reading the turn. Stage 1 acquires
// stage 0 all the same (its device fence before passing the turn follows its
// read) and publishes both to block 1. ScoRD: consumers need no fence, so
// stage 2's block-scope add is ordered after stage 1's, and stage 3's after
// stage 0's through stage 1 (clean). PTX: stages 2 and 3 never complete an
// acquire pattern, so the block-scope adds race with the other block's
// (error). CUDA default: a race that only the consumer's fence after the
// flag read would order, between atomics, is a warning ("missing fence after
// the flag read").
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
    if (me == 1)
        __threadfence();
    else
        __threadfence_block();
    atomicExch(turn, me + 1);
}
