// @kernel write_after_unlock(int*, int*)
// @atomics write_after_unlock 14:cas.gpu 22:exch.gpu
// @fences write_after_unlock 16:gpu 21:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --schedules 1 --detector lockset
// @expect data-race global 29 32
// PreDataR Fig. 10 compiled: both blocks write x inside the lock, and block 1
// writes it again after its unlock. Had block 1 locked first, its second write
// would run concurrently with block 0's. In the one (default) schedule block 0
// locks first: hb sees the lock order, and the two sections conflict on x, so
// gwcp keeps their order too; both miss it. lockset reports block 0's write
// (it holds the lock) against block 1's second write (it holds none).
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

__global__ void write_after_unlock(int* mutex, int* x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *x = blockIdx.x;
        unlock(mutex);
        if (blockIdx.x == 1) {
            *x = 2;
        }
    }
}
