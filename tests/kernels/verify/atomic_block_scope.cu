// @verify_launch --grid 4 --block 32
// @verify counter race confirmed 8 8
// atomicAdd_block orders only the threads of one block: blocks race on the
// counter (insufficient scope). Atomics are synchronisation verify does not
// model, so the alarm is possible until the simulated witness confirms it.
__global__ void count(int* counter)
{
    atomicAdd_block(counter, 1);
}
