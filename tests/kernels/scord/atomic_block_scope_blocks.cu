// @kernel tally(unsigned int*)
// @atomics tally 13:add.cta
// @launch --grid 2 --block 32 --arg buf:2
// @expect data-race global 13 13 error
// @expect_ptx data-race global 13 13 error
// @expect_scord data-race global 13 13 error
// ScoR category: atomics, inter-block, insufficient scope. Thread 0 of each
// block adds to one counter with atomicAdd_block: block-scoped atomics of two
// blocks race under every model (error).
__global__ void tally(unsigned int* count)
{
    if (threadIdx.x == 0)
        atomicAdd_block(&count[1], blockIdx.x + 1);
}
