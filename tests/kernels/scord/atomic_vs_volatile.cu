// @kernel mixed(volatile unsigned int*)
// @atomics mixed 15:exch.gpu
// @launch --grid 1 --block 64 --arg buf:1
// @expect data-race global 15 17 warning
// @expect_ptx clean
// @expect_scord data-race global 15 17 error
// ScoR category: atomics, inter-warp, atomic against non-atomic. Warp 0
// exchanges the word atomically, warp 1 stores it with a volatile store.
// ScoRD: only an atomic pair is exempt, and no fence orders them (error).
// PTX: volatile is .relaxed.sys, the pair is morally strong (clean). CUDA
// default: volatile is not atomic (warning).
__global__ void mixed(volatile unsigned int* word)
{
    if (threadIdx.x == 0)
        atomicExch((unsigned int*)word, 4u);
    else if (threadIdx.x == 32)
        *word = 8u;
}
