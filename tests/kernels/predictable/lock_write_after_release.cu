// @kernel after_release(int*, int*)
// @atomics after_release 15:cas.gpu 23:exch.gpu
// @fences after_release 17:gpu 22:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --detector gwcp --schedules 2
// @expect data-race global 30 33
// PreDataR Fig. 10 as a kernel: thread 0 of each block writes x inside the
// lock; block 1 writes it again after unlocking. Block 0 locks first in the
// default schedule and everything is ordered; when block 1 locks first (the
// reversed schedule 1), its write after the release runs concurrently with
// block 0's write inside. The two sections conflict on x, so gwcp keeps them in
// the observed order, like hb, and misses it from schedule 0: found by schedule 1
// (reverse) with gwcp or hb, and by lockset from any schedule.
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

__global__ void after_release(int* mutex, int* x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *x = blockIdx.x;
        unlock(mutex);
        if (blockIdx.x == 1) {
            *x = 3;
        }
    }
}
