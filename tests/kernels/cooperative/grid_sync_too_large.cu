// @kernel shift(int*, int*, int)
// @barriers shift 18
// @atomics shift 18:add.gpu
// @launch --cooperative --grid 41 --block 1024 --arg buf:41984 --arg buf:41984 --arg 41984
// @expect_error --cooperative: a cooperative launch of 41 blocks is more than can be resident at once
// @expect_error at most 40 blocks of 1024 threads
// A cooperative launch must fit on the device at once: blocks of 1024 threads fit one per multiprocessor,
// and the simulated device has 40, so 41 blocks are refused (cudaErrorCooperativeLaunchTooLarge on a GPU
// of that size).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift(int *a, int *b, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    a[i] = i;
    grid.sync();
    b[i] = a[(i + 1) % n];
}
