// @launch --grid 4 --block 32 --arg buf:1 --arg buf:4
// @expect clean
// Every block's leader takes a device-wide spin lock, counts itself in `total`
// and records its turn in `order`; nothing touches memory outside the lock.
// Every pair of accesses is ordered by the lock whichever leader wins first,
// and no value read decides a branch or an address, so the default check runs
// schedule 0 only (`detect.lock_confinement`, `sim.order_paths`).
__device__ int lock_word = 0;

__global__ void k(int* total, int* order)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        int turn = *total;
        *total = turn + 1;
        order[blockIdx.x] = turn;
        __threadfence();
        atomicExch(&lock_word, 0);
    }
}
