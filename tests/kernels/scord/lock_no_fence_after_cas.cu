// @kernel deposit(volatile int*, int*)
// @atomics deposit 18:cas.gpu 24:exch.gpu
// @fences deposit 21:gpu 23:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1
// @expect data-race global 22 22 warning
// @expect_ptx clean
// @expect_scord data-race global 22 22 error
// ScoR category: lock, inter-block, missing fence after the lock's
// atomicCAS in block 1. ScoRD infers a lock only from an atomicCAS followed
// by a fence, so block 1 updates the balance holding nothing (error). Under
// PTX the missing acquire fence leaves the two updates unordered when block 0
// locks first, but the volatile accesses are strong (clean); the CUDA default
// reports them (warning). The default check finds it in the schedule where
// block 0 takes the lock first.
__global__ void deposit(volatile int* balance, int* mutex)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    if (blockIdx.x == 0)
        __threadfence();
    *balance = *balance + 10 * (blockIdx.x + 1);
    __threadfence();
    atomicExch(mutex, 0);
}
