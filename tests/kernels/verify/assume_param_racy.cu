// @verify_launch --grid 1 --block 64 --no-confirm
// @verify a race certain 11 11
// @verify_labels a CI DI
// An exact __assume outside loops keeps an alarm certain: with n == 32 the
// two halves of the block write the same 32 elements.
#include "cuda.h"

__global__ void wrap(int* a, unsigned n)
{
    __assume(n == 32);
    a[threadIdx.x % n] = threadIdx.x;
}
