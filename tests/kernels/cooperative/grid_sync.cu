// @kernel shift(int*, int*, int)
// @barriers shift 17
// @atomics shift 17:add.gpu
// @launch --cooperative --grid 4 --block 64 --arg buf:256 --arg buf:256 --arg 256
// @expect clean
// Two phases across the grid: every thread writes its element of `a`, the whole grid synchronises, and
// every thread then reads its right neighbour's element, which another thread (for the last thread of a
// block, a thread of the next block) wrote. grid.sync() orders the two phases, so nothing races.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift(int *a, int *b, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    a[i] = i;
    grid.sync();
    b[i] = a[(i + 1) % n];
}
