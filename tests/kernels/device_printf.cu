// @kernel say(const int*)
// @launch --grid 2 --block 32 --arg buf:2:iota
// @expect clean
// Device-side printf: a call to vprintf with an argument buffer in local memory.
#include <cstdio>

__global__ void say(const int* v)
{
    if (threadIdx.x == 0)
        printf("block %d value %d\n", blockIdx.x, v[blockIdx.x]);
}
