// @kernel shift(int*, int*, int)
// @barriers shift 16
// @atomics shift 16:add.gpu
// @launch --no-cooperative --grid 4 --block 64 --arg buf:256 --arg buf:256 --arg 256
// @expect trap 16
// grid_sync.cu's kernel launched with --no-cooperative: outside a cooperative launch the grid group is not
// valid, and grid.sync() executes `trap` (on a GPU the launch fails with cudaErrorLaunchFailure).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift(int *a, int *b, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    a[i] = i;
    grid.sync();
    b[i] = a[(i + 1) % n];
}
