// @kernel smooth(float*, float*, int, int)
// @barriers smooth 21
// @atomics smooth 21:add.gpu
// @launch --cooperative --grid 4 --block 32 --arg f32:128:iota --arg f32:128 --arg 128 --arg 3
// @expect clean
// Iterative smoothing with grid.sync() inside the loop: each step reads the neighbours' values from one
// buffer and writes the other, then the grid synchronises before the buffers swap roles. Every step reads
// what other blocks wrote in the step before.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void smooth(float *x, float *y, int n, int steps) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    for (int s = 0; s < steps; s++) {
        float *from = (s % 2 == 0) ? x : y;
        float *to = (s % 2 == 0) ? y : x;
        float left = from[(i + n - 1) % n], right = from[(i + 1) % n];
        to[i] = (left + from[i] + right) / 3.0f;
        grid.sync();
    }
}
