//pass
//--blockDim=64 --gridDim=2
// @expect clean
// A function pointer parameter that a disjunction of __requires pins to one of
// two functions, and a mode that one of two values must hold: under `auto`,
// gpurace passes the first alternative of each (`keep`, mode 1), so the kernel
// runs inside its precondition. `keep` updates the thread's own element: no race.
// The racy twin is requires_function_pointer_racy.cu.
#include <cuda.h>

typedef void (*update)(float *, unsigned);

__device__ void keep(float *v, unsigned i) { v[i] = v[i] + 1.0f; }
__device__ void shift(float *v, unsigned i) { v[i + 1] = v[i]; }

__global__ void apply(float *v, update f, int mode)
{
    __requires(f == keep | f == shift);
    __requires(mode == 1 || mode == 2 && f == shift);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (mode == 1)
        f(v, i);
}
