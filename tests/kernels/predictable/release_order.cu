// @kernel release_order(int*, int*, int*, int*)
// @atomics release_order 14:cas.gpu 22:exch.gpu 33:exch.gpu 37:add.gpu
// @fences release_order 16:gpu 21:gpu 32:gpu 39:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1 --arg buf:1 --detector gwcp
// @expect clean
// Block 0 raises a flag inside its critical section and then writes z; block 1
// waits for the flag before it takes the lock, then reads z after unlocking.
// Block 1's section can only follow block 0's (the flag was raised inside it),
// so the read of z is ordered in every schedule, although the two sections
// share no data: gwcp orders the releases by rule (b) (the first section's
// acquire is ordered before the second release). Clean for gwcp and hb.
__device__ void lock(int* mutex)
{
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
}

__device__ void unlock(int* mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

__global__ void release_order(int* mutex, int* flag, int* z, int* out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        lock(mutex);
        __threadfence();
        atomicExch(flag, 1);
        *z = 1;
        unlock(mutex);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        __threadfence();
        lock(mutex);
        unlock(mutex);
        *out = *z;
    }
}
