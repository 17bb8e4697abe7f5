// @kernel cta_lock_across_blocks(int*, int*)
// @atomics cta_lock_across_blocks 14:cas.cta 22:exch.cta
// @fences cta_lock_across_blocks 16:cta 21:cta
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --detector lockset
// @expect data-race global 29 29
// @expect data-race global 14 14
// @expect data-race global 14 22
// A block-scoped lock (atomicCAS_block, __threadfence_block) taken by the
// first lane of each warp of two blocks: holds from different blocks do not
// overlap, so the counter updates of the two blocks share no lock and race;
// the block-scoped atomics on the lock word race across blocks too (hb).
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

__global__ void cta_lock_across_blocks(int* mutex, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
