// @launch --grid 4 --block 64 --arg buf:1 --arg buf:1
// @expect data-race global 8 8
// A lock without fences: the critical sections are not ordered.
__global__ void count(int* lock, int* counter)
{
    if (threadIdx.x % 32 == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {}
        *counter += 1;
        atomicExch(lock, 0);
    }
}
