//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=4
// @expect data-race global 17 19
// The twin of grid_barrier.cu that synchronises only its block: the launch is still cooperative (the
// kernel uses this_grid()), but the last thread of each block reads the next block's first element
// (line 17) while that block may already have overwritten it (line 19).
#include <cuda.h>

using namespace cooperative_groups;

__global__ void shift_left(int *A)
{
    grid_group grid = this_grid();
    thread_block block = this_thread_block();
    unsigned i = grid.thread_rank();
    int next = 0;
    if (i + 1 < grid.size()) next = A[i + 1];
    block.sync();
    A[i] = next;
}
