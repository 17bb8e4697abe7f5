// @kernel deposit(volatile int*, int*)
// @atomics deposit 14:cas.cta 19:exch.cta
// @fences deposit 16:cta 18:cta
// @launch --grid 1 --block 64 --arg buf:1 --arg buf:1
// @expect clean
// @expect_ptx clean
// @expect_scord clean
// ScoR category: lock, inter-warp. The block-scope lock of
// lock_block_scope_blocks.cu, taken by lane 0 of the two warps of one block:
// the scope covers both, clean under every model.
__global__ void deposit(volatile int* balance, int* mutex)
{
    if (threadIdx.x % 32 != 0) return;
    while (atomicCAS_block(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
    *balance = *balance + 1 + threadIdx.x;
    __threadfence_block();
    atomicExch_block(mutex, 0);
}
