//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=2
// @expect data-race global 13 13
// The twin of requires_function_pointer.cu whose first alternatives are `shift`
// and mode 2: under `auto` the pointer holds `shift`'s address, and thread i's
// write of v[i + 1] races with thread i + 1's read of it (line 13).
#include <cuda.h>

typedef void (*update)(float *, unsigned);

__device__ void keep(float *v, unsigned i) { v[i] = v[i] + 1.0f; }
__device__ void shift(float *v, unsigned i)
{ v[i + 1] = v[i]; }

__global__ void apply(float *v, update f, int mode)
{
    __requires(f == shift | f == keep);
    __requires(mode == 2 && f == shift || mode == 1);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (mode == 2)
        f(v, i);
}
