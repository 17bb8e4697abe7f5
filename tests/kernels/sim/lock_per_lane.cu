// @launch --grid 2 --block 64 --arg buf:1 --arg buf:2
// @expect clean
// Every lane of every warp takes the device-wide lock in turn. The loop is written
// so that the lane holding the lock releases it before it can spin again
// (the pattern that is safe under independent thread scheduling).
__global__ void lock_per_lane(int* lock, int* counters)
{
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            __threadfence();
            volatile int* c = counters;
            c[0] = c[0] + 1;
            c[1] = c[1] + threadIdx.x;
            __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}
