// @launch --grid 4 --block 64 --arg buf:1 --arg buf:1
// @expect data-race global 9 9
// The lock with block-scoped fences used from several blocks: insufficient scope.
__global__ void count(int* lock, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {}
        __threadfence_block();
        *counter += 1;
        __threadfence_block();
        atomicExch(lock, 0);
    }
}
