// @kernel write_inside_lock(int*, int*, int*)
// @atomics write_inside_lock 12:cas.gpu 20:exch.gpu
// @fences write_inside_lock 14:gpu 19:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1 --detector lockset
// @expect clean
// The race-free twin of write_before_lock.cu: both blocks write x inside the
// critical section, so the two writes share the device-scope lock (a common
// lock), and so do the updates of y.
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

__global__ void write_inside_lock(int* mutex, int* x, int* y)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *x = blockIdx.x;
        *y = *y + 1;
        unlock(mutex);
    }
}
