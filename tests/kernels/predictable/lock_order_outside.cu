// @kernel lock_order(int*, int*)
// @atomics lock_order 12:cas.gpu 20:exch.gpu
// @fences lock_order 14:gpu 19:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --detector gwcp
// @expect data-race global 28 32
// Block 0 writes x inside its critical section; block 1 takes the same lock,
// releases it, then writes x outside. Whoever locks first decides: block 0
// first (the default schedule) orders the writes, block 1 first races.
// Found by gwcp only: hb sees the lock order of this run.
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

__global__ void lock_order(int* mutex, int* x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        if (blockIdx.x == 0) {
            *x = 1;
        }
        unlock(mutex);
        if (blockIdx.x == 1) {
            *x = 2;
        }
    }
}
