// @verify_launch --grid 4 --block 64 -G --no-confirm
// @verify a race possible 19 21
// @verify b race-free
// @verify_barriers divergence possible 20
// @verify_divergence certain
// Only the even blocks reach the grid barrier, so the others never arrive:
// a barrier divergence across blocks, which verify reports (compiled with
// -G, where cooperative groups' functions are calls); with the barrier not
// passed by every thread, it orders nothing, and the exchange is a possible race.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void shift(int* a, int* b)
{
    cg::grid_group grid = cg::this_grid();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x % 2 == 0) {
        a[i] = i;
        grid.sync();
        b[i] = a[(i + 128) % 256];
    }
}
