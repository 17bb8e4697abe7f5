// @launch --grid 1 --block 32 --arg buf:1 --arg buf:1
// @expect clean
// The naive spin lock taken by every lane of one warp. It hangs under lock-step
// execution (the winner waits for the spinning lanes to reconverge) and works with
// independent thread scheduling, which the simulator models.
__global__ void warp_lock(int* lock, int* counter)
{
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    *(volatile int*)counter = *(volatile int*)counter + 1;
    __threadfence();
    atomicExch(lock, 0);
}
