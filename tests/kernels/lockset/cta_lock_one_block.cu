// @kernel cta_lock_one_block(int*, int*)
// @atomics cta_lock_one_block 11:cas.cta 19:exch.cta
// @fences cta_lock_one_block 13:cta 18:cta
// @launch --grid 1 --block 128 --arg buf:1 --arg buf:1 --detector lockset
// @expect clean
// The same block-scoped lock taken by the first lane of each warp of one
// block: every hold covers the block, so the lock is common to all the
// counter updates.
__device__ void lock(int* mutex)
{
    while (atomicCAS_block(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
}

__device__ void unlock(int* mutex)
{
    __threadfence_block();
    atomicExch_block(mutex, 0);
}

__global__ void cta_lock_one_block(int* mutex, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
