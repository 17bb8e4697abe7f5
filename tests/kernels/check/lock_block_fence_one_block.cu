// @launch --grid 1 --block 64 --arg buf:1 --arg buf:1
// @expect clean
// Block-scoped fences are enough when the lock is used within one block.
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
