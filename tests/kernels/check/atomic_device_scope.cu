// @launch --grid 4 --block 32 --arg buf:1
// @expect clean
// atomicAdd on one global counter from several blocks.
__global__ void k(int* counter)
{
    atomicAdd(counter, 1);
}
