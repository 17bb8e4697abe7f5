// @kernel cta_lock_warps(int*, int*)
// @atomics cta_lock_warps 11:cas.cta 19:exch.cta
// @fences cta_lock_warps 13:cta 18:cta
// @launch --grid 1 --block 128 --arg buf:1 --arg buf:1 --detector gwcp
// @expect clean
// The same block-scoped lock, taken by the first lane of each warp of one
// block: every section's scope covers every other, so the counter updates are
// ordered in every lock order (gwcp rule (a)). Clean for gwcp and hb.
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

__global__ void cta_lock_warps(int* mutex, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
