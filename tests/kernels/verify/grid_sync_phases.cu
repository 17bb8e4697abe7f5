// @verify_launch --grid 4 --block 64
// @verify a race-free
// @verify b race-free
// @verify_barriers proved uniform
// Two phases across the grid: each thread writes its element, the grid
// synchronises, and each thread reads its neighbour's element, written by
// another thread (of the next block, for a block's last thread). verify
// takes this_grid().sync() as a barrier of the whole grid (the kernel is
// launched cooperatively, as grid.sync() requires).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift(int* a, int* b, int n)
{
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    a[i] = i;
    grid.sync();
    b[i] = a[(i + 1) % n];
}
