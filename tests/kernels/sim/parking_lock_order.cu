// @launch --grid 8 --block 32 --arg buf:1 --arg buf:1 --arg buf:8
// @expect clean
// Each block's leader takes one device-wide spin lock and writes its block
// index into the next slot of `order`: the order in which the parked waiters
// were woken and took the lock.
__global__ void lock_order(int* lock, int* next, int* order)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {
        }
        __threadfence();
        volatile int* n = next;
        int slot = *n;
        order[slot] = blockIdx.x;
        *n = slot + 1;
        __threadfence();
        atomicExch(lock, 0);
    }
}
