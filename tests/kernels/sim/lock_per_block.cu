// @launch --grid 8 --block 64 --arg buf:1 --arg buf:2
// @expect clean
// Device-wide lock: thread 0 of each block takes the lock (atomicCAS spin), updates
// two counters non-atomically inside the critical section and releases it.
__global__ void lock_per_block(int* lock, int* counters)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {
        }
        __threadfence();
        volatile int* c = counters;
        c[0] = c[0] + 1;
        c[1] = c[1] + blockIdx.x;
        __threadfence();
        atomicExch(lock, 0);
    }
}
