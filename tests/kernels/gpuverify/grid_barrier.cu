//pass
//--blockDim=64 --gridDim=4
// @expect clean
// Written for GPUVerify, which takes grid.sync() for a grid-wide barrier: each thread reads its right
// neighbour's element (the last thread of a block reads the next block's first), the whole grid
// synchronises, and each thread overwrites its own. The kernel uses this_grid(), so check launches it
// cooperatively, the one launch in which grid.sync() is valid. The racy twin is grid_barrier_racy.cu.
#include <cuda.h>

using namespace cooperative_groups;

__global__ void shift_left(int *A)
{
    grid_group grid = this_grid();
    unsigned i = grid.thread_rank();
    int next = i + 1 < grid.size() ? A[i + 1] : 0;
    grid.sync();
    A[i] = next;
}
