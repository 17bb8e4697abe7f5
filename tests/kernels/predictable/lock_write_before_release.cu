// @kernel before_release(int*, int*)
// @atomics before_release 11:cas.gpu 19:exch.gpu
// @fences before_release 13:gpu 18:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --detector gwcp --schedules 4
// @expect clean
// The race-free twin of lock_write_after_release.cu: block 1's second write is
// inside its critical section, so every lock order keeps the writes apart
// (gwcp rule (a), hb in every schedule).
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

__global__ void before_release(int* mutex, int* x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *x = blockIdx.x;
        if (blockIdx.x == 1) {
            *x = 3;
        }
        unlock(mutex);
    }
}
