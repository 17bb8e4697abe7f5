// @launch --grid 2 --block 1 --arg buf:1
// @expect data-race global 25 30
// Found by: the default check's flip schedule (block 0 draws the first ticket).
// A ticket lock: each one-thread block draws a ticket (block 0 with atomicAdd,
// block 1 with atomicInc, so that the draws stay in their branches) and waits
// until `serving` (read and advanced with atomics) shows it. The else-branch
// (block 1's) is laid out first, so under min-pc and reverse block 1 draws
// ticket 0 and goes first. Block 1 reads `data` inside its section; block 0
// writes it after handing the lock on. Only when block 0 draws ticket 0 does
// block 1's read follow block 0's release without following its write.
__device__ unsigned int next_ticket = 0;
__device__ unsigned int serving = 0;
__device__ int seen = 0;

__global__ void k(int* data)
{
    unsigned int t;
    if (blockIdx.x == 0) {
        t = atomicAdd(&next_ticket, 1);
        while (atomicAdd(&serving, 0) != t) {}
        __threadfence();
        seen = 1;
        __threadfence();
        atomicExch(&serving, t + 1);
        *data = 1;
    } else {
        t = atomicInc(&next_ticket, 0xffffffffu);
        while (atomicAdd(&serving, 0) != t) {}
        __threadfence();
        seen = *data;
        __threadfence();
        atomicExch(&serving, t + 1);
    }
}
