// @verify_launch --grid 1 --block 64 -G
// @verify v race certain 11 17
// @verify_labels v CI DI
// One of the functions the pointer can hold writes v[i + 1], where the
// next thread wrote v[i + 1] just before: a race found only by following
// the call into each function the pointer may reach.
#include "cuda.h"

typedef void (*update_fn)(float*, unsigned);

__device__ void shifted(float* v, unsigned i) { v[i + 1] = 0.0f; }
__device__ void own(float* v, unsigned i) { v[i] = 0.0f; }

__global__ void apply(float* v, update_fn f)
{
    __requires(f == own | f == shifted);
    v[threadIdx.x] = 1.0f;
    f(v, threadIdx.x);
}
