// @verify_launch --grid 4 --block 32
// @verify counter race-free
// atomicAdd covers every thread of the launch: atomics never race each other.
__global__ void count(int* counter)
{
    atomicAdd(counter, 1);
}
