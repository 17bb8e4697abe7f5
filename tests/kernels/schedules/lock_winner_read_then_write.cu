// @launch --grid 2 --block 1 --arg buf:1
// @expect data-race global 22 26
// Found by: the default check's flip schedule (block 0 takes the lock first).
// Two one-thread blocks take a device-wide spin lock in an if/else on the block
// index; the else-branch (block 1's) is laid out first, so under min-pc and
// reverse block 1 always takes the lock first. Both critical sections write the
// device variable `seen`, so a predictive detector keeps them in observed order.
// Block 1 reads `data` inside its section; block 0 writes it after releasing.
// When block 1 wins, block 0's acquire orders the read before the write; when
// block 0 wins, block 1's read follows the release but not the write: a race.
__device__ int lock_word = 0;
__device__ int seen = 0;

__global__ void k(int* data)
{
    if (blockIdx.x == 0) {
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        seen = 1;
        __threadfence();
        atomicExch(&lock_word, 0);
        *data = 1;
    } else {
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        seen = *data;
        __threadfence();
        atomicExch(&lock_word, 0);
    }
}
