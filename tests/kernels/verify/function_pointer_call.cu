// @verify_launch --grid 4 --block 128 -G
// @verify v race-free
// A call through a function pointer runs each function the pointer can
// hold: `__requires` says which, and both touch only v[i] of their thread.
#include "cuda.h"

typedef float (*scale_fn)(float*, unsigned);

__device__ float twice(float* v, unsigned i) { v[i] = v[i] * 2.0f; return v[i]; }
__device__ float half(float* v, unsigned i) { v[i] = v[i] * 0.5f; return v[i]; }

__global__ void apply(float* v, scale_fn f, int which)
{
    __requires(f == twice | f == half);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    scale_fn g = which ? f : twice;  // chosen in a branch: kept in local memory under -G
    g(v, i);
}
