// @kernel deposit(volatile int*, int*)
// @atomics deposit 20:cas.cta 25:exch.cta
// @fences deposit 22:cta 24:cta
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1
// @expect data-race global 20 20 error
// @expect data-race global 20 25 error
// @expect data-race global 23 23 warning
// @expect_ptx data-race global 20 20 error
// @expect_ptx data-race global 20 25 error
// @expect_scord data-race global 20 20 error
// @expect_scord data-race global 20 25 error
// @expect_scord data-race global 23 23 error
// ScoR category: lock, inter-block, insufficient scope: the lock is taken
// with atomicCAS_block and __threadfence_block, which exclude only threads of
// one block. ScoRD: scoped race on the balance (error). PTX: the volatile
// accesses are strong (clean). CUDA default: volatile is not atomic (warning).
__global__ void deposit(volatile int* balance, int* mutex)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS_block(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
    *balance = *balance + 10 * (blockIdx.x + 1);
    __threadfence_block();
    atomicExch_block(mutex, 0);
}
