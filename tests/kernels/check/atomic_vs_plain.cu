// @launch --grid 2 --block 32 --arg buf:1 --arg buf:64
// @expect data-race global 6 7
// One thread reads the counter with a plain load while others add atomically.
__global__ void k(int* counter, int* seen)
{
    atomicAdd(counter, 1);
    seen[blockIdx.x * 32 + threadIdx.x] = *counter;
}
