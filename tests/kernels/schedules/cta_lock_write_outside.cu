// @launch --grid 1 --block 64 --arg buf:1 --schedules 4
// @expect data-race shared 14 17
// @expect uninitialized-read shared 17
// Found by: the reversed schedule 1 (warp 1 takes the lock first) with hb, and by gwcp (the default) from schedule 0.
// Lane 0 of each of the two warps of one block takes a block-scoped lock (atomicCAS_block, __threadfence_block:
// cta scope suffices inside one block). Warp 0 writes the shared word before taking the lock, warp 1 inside the
// critical section (it reads the word too, so neither store is dead). Under schedule 0 (min-pc) warp 0 wins the
// CAS and its write is ordered before warp 1's; when warp 1 wins, nothing orders them, and when warp 1 also
// runs before warp 0's store (schedule 2), its += reads the word unwritten (the uninitialised read).
__global__ void k(int* lock)
{
    __shared__ int word;
    if (threadIdx.x % 32 != 0) return;
    if (threadIdx.x == 0) word = 1;
    while (atomicCAS_block(lock, 0, 1) != 0) {}
    __threadfence_block();
    if (threadIdx.x == 32) word += 2;
    __threadfence_block();
    atomicExch_block(lock, 0);
}
