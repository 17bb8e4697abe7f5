// @launch --grid 2 --block 1 --arg buf:1
// @expect data-race global 17 22
// @expect data-race global 18 22
// Found by: the default check's reverse schedule (block 1 takes the lock first).
// Both blocks take a device-wide spin lock and count themselves in `total`
// inside it; the block that counted first writes `total` again after its
// release, but only when it is block 1. Under min-pc block 0 wins, so every
// access of that run sits inside a critical section; the value read inside
// decides a branch, though (`sim.order_paths`), so the other orders still run:
// when block 1 wins, its write after the release races with block 0's section.
__device__ int lock_word = 0;

__global__ void k(int* total)
{
    while (atomicCAS(&lock_word, 0, 1) != 0) {}
    __threadfence();
    int turn = *total;
    *total = turn + 1;
    __threadfence();
    atomicExch(&lock_word, 0);
    if (turn == 0 && blockIdx.x == 1)
        *total = 10;
}
