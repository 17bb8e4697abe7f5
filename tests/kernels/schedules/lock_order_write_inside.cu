// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --schedules 4
// @expect clean
// The race-free twin of lock_order_write_outside.cu: both blocks write the
// shared word inside the critical section, so whichever block takes the lock
// first, its write is ordered before the other's (happens-before detector,
// every schedule).
__global__ void k(int* lock, int* data)
{
    if (threadIdx.x != 0) return;
    while (atomicCAS(lock, 0, 1) != 0) {}
    __threadfence();
    *data = blockIdx.x + 1;
    __threadfence();
    atomicExch(lock, 0);
}
