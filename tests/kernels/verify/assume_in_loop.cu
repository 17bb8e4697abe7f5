// @verify_launch --grid 1 --block 64
// @verify cols race-free
// @verify a race-free
// An __assume inside a loop holds in every iteration that reaches it: here
// the column each thread loads is its own, row after row.
#include "cuda.h"

__global__ void rows(int* a, const unsigned* cols, int n)
{
    for (int r = 0; r < n; r++) {
        unsigned c = cols[r * blockDim.x + threadIdx.x];
        __assume(c == threadIdx.x);
        a[r * blockDim.x + c] += r;
    }
}
