// @verify_launch --grid 4 --block 64 --no-confirm
// @verify a race certain 18 19
// @verify b race-free
// @verify_labels a CI DI
// @verify_barriers proved uniform
// grid_sync_phases.cu reading the neighbour's element before the grid
// synchronises: the read races with the neighbour's write, across blocks
// too, and the grid barrier after both orders nothing between them.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift(int* a, int* b, int n)
{
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    __requires(n == 256);
    a[i] = i;
    int right = a[(i + 1) % n];
    grid.sync();
    b[i] = right;
}
