// @kernel shift_unsynced(int*, int*, int)
// @launch --cooperative --grid 4 --block 64 --arg buf:256 --arg buf:256 --arg 256
// @expect data-race global 14 15
// The racy twin of grid_sync.cu: the same two phases without grid.sync(), so every thread reads the
// element its right neighbour writes (for the last thread of a block: the next block's first thread) with
// nothing ordering the two.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift_unsynced(int *a, int *b, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    a[i] = i;
    b[i] = a[(i + 1) % n];
}
