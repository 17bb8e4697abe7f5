// @kernel lock_order_inside(int*, int*)
// @atomics lock_order_inside 12:cas.gpu 20:exch.gpu
// @fences lock_order_inside 14:gpu 19:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --detector gwcp
// @expect clean
// The race-free twin of lock_order_outside.cu: both blocks write x inside the
// critical section, so every lock order keeps the writes apart. gwcp orders
// them by rule (a) (conflicting accesses in two sections of one lock), hb by
// the lock order of this run.
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

__global__ void lock_order_inside(int* mutex, int* x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *x = blockIdx.x + 1;
        unlock(mutex);
    }
}
