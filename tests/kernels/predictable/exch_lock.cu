// @kernel exch_lock(int*, int*)
// @atomics exch_lock 14:exch.gpu 22:exch.gpu
// @fences exch_lock 16:gpu 21:gpu
// @launch --grid 4 --block 32 --arg buf:1 --arg buf:1 --detector gwcp
// @expect clean
// A spin lock built from atomicExch alone, taken by one thread per block to
// bump a counter. An exchange that changes a value is also how flags are
// raised, so gwcp infers a new lock from compare-and-swap only and treats this one
// as happens-before synchronisation (fence, then exchange; exchange, then
// fence): the counter updates are ordered, as in hb. Clean for gwcp and hb;
// gwcp is not predictive here.
__device__ void lock(int* mutex)
{
    while (atomicExch(mutex, 1) != 0) {
    }
    __threadfence();
}

__device__ void unlock(int* mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

__global__ void exch_lock(int* mutex, int* counter)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
