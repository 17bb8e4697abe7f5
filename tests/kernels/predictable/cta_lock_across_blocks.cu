// @kernel cta_lock(int*, int*)
// @atomics cta_lock 15:cas.cta 23:exch.cta
// @fences cta_lock 17:cta 22:cta
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --detector gwcp
// @expect data-race global 15 15
// @expect data-race global 15 23
// @expect data-race global 30 30
// A block-scoped lock (atomicCAS_block, __threadfence_block) taken by one
// thread of each of two blocks: its scope covers one block only, so it does
// not exclude the other block: the counter updates race in every schedule,
// and so do the block-scoped atomics on the lock word with each other.
// Found by gwcp and by hb (insufficient scope).
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

__global__ void cta_lock(int* mutex, int* counter)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
