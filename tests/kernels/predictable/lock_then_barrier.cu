// @kernel lock_then_barrier(int*, int*)
// @barriers lock_then_barrier 36
// @atomics lock_then_barrier 16:cas.gpu 24:exch.gpu
// @fences lock_then_barrier 18:gpu 23:gpu
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --detector gwcp --schedules 2
// @expect data-race global 32 38
// Thread 0 of each block takes a device lock (block 0 writes x inside it), then
// the block passes a barrier and thread 32 of block 1 writes x. In the default
// schedule block 0 locks first: block 1's lock, then its barrier, order the
// write after block 0's, for hb and for gwcp alike (a barrier passes on what its
// participants happen after, GWCP's composition with happens-before). When
// block 1 locks first, its write runs concurrently with block 0's section:
// found by schedule 1 (reverse) with gwcp or hb.
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

__global__ void lock_then_barrier(int* mutex, int* x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        if (blockIdx.x == 0) {
            *x = 1;
        }
        unlock(mutex);
    }
    __syncthreads();
    if (blockIdx.x == 1 && threadIdx.x == 32) {
        *x = 2;
    }
}
