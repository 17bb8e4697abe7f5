// @kernel lock_then_barrier_seen(int*, int*, int*)
// @shared lock_then_barrier_seen 4
// @barriers lock_then_barrier_seen 39
// @atomics lock_then_barrier_seen 15:cas.gpu 23:exch.gpu
// @fences lock_then_barrier_seen 17:gpu 22:gpu
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --arg buf:1 --detector gwcp --schedules 4
// @expect uninitialized-read shared 40
// The race-free twin of lock_then_barrier.cu: block 1 writes x only when it saw block 0's `done` inside its
// own critical section. When block 1 locks first it sees 0 and writes nothing; otherwise the sections conflict
// on `done` (gwcp rule (a)) and the barrier passes that on to thread 32. Clean for gwcp and hb in every schedule.
// The finding is no race: the compiled code loads `seen` (line 40) in every thread before it tests the block and
// thread, and block 0 never writes `seen`: its threads read garbage (then ignored) that the source never reads.
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

__global__ void lock_then_barrier_seen(int* mutex, int* x, int* done)
{
    __shared__ int seen;
    if (threadIdx.x == 0) {
        lock(mutex);
        if (blockIdx.x == 0) {
            *x = 1;
            *done = 1;
        } else {
            seen = *done;
        }
        unlock(mutex);
    }
    __syncthreads();
    if (blockIdx.x == 1 && threadIdx.x == 32 && seen) {
        *x = 2;
    }
}
