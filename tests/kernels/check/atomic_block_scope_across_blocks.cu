// @launch --grid 4 --block 32 --arg buf:1
// @expect data-race global 6 6
// atomicAdd_block on one global counter from several blocks: insufficient scope.
__global__ void k(int* counter)
{
    atomicAdd_block(counter, 1);
}
