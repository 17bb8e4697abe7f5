// @launch --grid 1 --block 64 --arg buf:1 --schedules 4
// @expect uninitialized-read shared 12
// The race-free twin of cta_lock_write_outside.cu: both warps write the shared word inside the block-scoped
// critical section, ordered whichever warp takes the lock first (happens-before detector, every schedule).
// The finding is no race: nothing initialises `word`, so the first warp's += (line 12) reads garbage.
__global__ void k(int* lock)
{
    __shared__ int word;
    if (threadIdx.x % 32 != 0) return;
    while (atomicCAS_block(lock, 0, 1) != 0) {}
    __threadfence_block();
    word += threadIdx.x;
    __threadfence_block();
    atomicExch_block(lock, 0);
}
