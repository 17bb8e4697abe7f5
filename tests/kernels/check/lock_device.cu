// @launch --grid 4 --block 64 --arg buf:1 --arg buf:1
// @expect clean
// A device-wide lock taken by one lane per warp of every block.
__global__ void count(int* lock, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {}
        __threadfence();
        *counter += 1;
        __threadfence();
        atomicExch(lock, 0);
    }
}
