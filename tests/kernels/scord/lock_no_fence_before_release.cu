// @kernel deposit(volatile int*, int*)
// @atomics deposit 15:cas.gpu 19:exch.gpu
// @fences deposit 17:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1
// @expect data-race global 18 18 warning
// @expect_ptx clean
// @expect_scord data-race global 18 18 error
// ScoR category: lock, inter-block, missing fence before the unlock: the
// atomicExch alone does not publish the update. ScoRD: missing device fence
// (error). PTX: the volatile accesses are strong (clean). CUDA default:
// volatile is not atomic (warning).
__global__ void deposit(volatile int* balance, int* mutex)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
    *balance = *balance + 10 * (blockIdx.x + 1);
    atomicExch(mutex, 0);
}
