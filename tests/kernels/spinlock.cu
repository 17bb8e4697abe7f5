// @kernel locked_increment(int*, int*)
// @atomics locked_increment 9:cas.gpu 17:exch.gpu
// @fences locked_increment 11:gpu 16:gpu
// @launch --grid 4 --block 32 --arg buf:1 --arg buf:1
// @expect clean
// A global spin lock protecting a non-atomic counter update, one thread per block.
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

__global__ void locked_increment(int* mutex, int* counter)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
