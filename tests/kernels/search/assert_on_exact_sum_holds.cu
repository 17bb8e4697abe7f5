// @launch --grid 1 --block 32 --search
// @expect clean
// The twin of assert_on_exact_sum.cu whose assertion holds for every c: the
// search may drive c to 1417 and past it, and no candidate fails.
#include <cuda.h>

__global__ void checked_sum(unsigned a, unsigned c)
{
    __requires(a == 700);
    unsigned twice = 2 * a + 17;
    __assert(twice != c || c == 1417);
}
