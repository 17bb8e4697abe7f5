// @kernel write_before_lock(int*, int*, int*)
// @atomics write_before_lock 14:cas.gpu 22:exch.gpu
// @fences write_before_lock 16:gpu 21:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1 --schedules 1 --detector lockset
// @expect data-race global 29 33
// PreDataR Fig. 3 compiled: block 0 writes x before taking the lock, block 1
// writes it inside its critical section. In the one (default) schedule block
// 0 locks first, the lock orders the writes and hb sees no race; block 1
// could lock first. lockset reports the pair from this one schedule: one
// write holds the device-scope lock, the other holds none, and nothing but the
// lock orders them.
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

__global__ void write_before_lock(int* mutex, int* x, int* y)
{
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0) {
            *x = 1;
        }
        lock(mutex);
        if (blockIdx.x == 1) {
            *x = 2;
        }
        *y = *y + 1;
        unlock(mutex);
    }
}
