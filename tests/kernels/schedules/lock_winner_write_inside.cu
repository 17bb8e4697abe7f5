// @launch --grid 2 --block 1 --arg buf:1
// @expect clean
// The race-free twin of lock_winner_read_then_write.cu: block 0 writes `data`
// inside its critical section, before releasing the lock, so whichever block
// takes the lock first (block 1 under min-pc and reverse, block 0 under the
// default check's flip schedule), the lock orders the write and the read.
__device__ int lock_word = 0;
__device__ int seen = 0;

__global__ void k(int* data)
{
    if (blockIdx.x == 0) {
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        seen = 1;
        *data = 1;
        __threadfence();
        atomicExch(&lock_word, 0);
    } else {
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        seen = *data;
        __threadfence();
        atomicExch(&lock_word, 0);
    }
}
