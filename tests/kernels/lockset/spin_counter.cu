// @kernel spin_counter(int*, int*)
// @atomics spin_counter 12:cas.gpu 20:exch.gpu
// @fences spin_counter 14:gpu 19:gpu
// @launch --grid 4 --block 128 --arg buf:1 --arg buf:1 --detector lockset
// @expect clean
// The first lane of every warp (16 threads in 4 blocks, several in one block)
// spins on a device-scope lock to bump a counter: most compare-and-swaps fail
// and open nothing; each successful one and its fence make the counter's
// read and write hold the lock, a common lock for every pair.
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

__global__ void spin_counter(int* mutex, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        lock(mutex);
        *counter = *counter + 1;
        unlock(mutex);
    }
}
