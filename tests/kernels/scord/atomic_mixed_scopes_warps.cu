// @kernel tally(unsigned int*)
// @atomics tally 13:add.gpu 15:add.cta
// @launch --grid 1 --block 64 --arg buf:2
// @expect clean
// @expect_ptx clean
// @expect_scord clean
// ScoR category: atomics, inter-warp. Warp 0 adds with device scope, warp 1
// with block scope; both threads are in the block scope, so the atomics never
// race under any model (clean).
__global__ void tally(unsigned int* count)
{
    if (threadIdx.x == 0)
        atomicAdd(&count[0], 1u);
    else if (threadIdx.x == 32)
        atomicAdd_block(&count[0], 2u);
}
