// @verify_launch --grid 1 --block 64 --no-confirm
// @verify cols race-free
// @verify a race possible 16 16
// @verify_labels a CI
// @verify_approx a the __assume at tests/kernels/verify/assume_in_loop_racy.cu:15, in a loop
// assume_in_loop.cu with two threads per column: the read-modify-write of
// a thread races with its neighbour's. The assumption sits in a loop, so a
// witness satisfies it in the iterations it names only: possible, not certain.
#include "cuda.h"

__global__ void rows(int* a, const unsigned* cols, int n)
{
    for (int r = 0; r < n; r++) {
        unsigned c = cols[r * blockDim.x + threadIdx.x];
        __assume(c == threadIdx.x / 2);
        a[r * blockDim.x + c] += r;
    }
}
