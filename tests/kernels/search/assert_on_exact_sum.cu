// @launch --grid 1 --block 32 --search
// @expect assertion-failure 14
// A kernel that touches no memory before its assertion, which fails only when
// c is exactly 2 * a + 17 = 1417: every candidate collides in memory alike
// (not at all), so only the distance of `!=` from failing, |2a + 17 - c|,
// tells the search which way c must move. Drawing c blindly from the
// search's range would hit 1417 about once in a thousand tries.
#include <cuda.h>

__global__ void checked_sum(unsigned a, unsigned c)
{
    __requires(a == 700);
    unsigned twice = 2 * a + 17;
    __assert(twice != c);
}
