// @launch --grid 1 --block 64 --arg buf:64 --arg 2
// @expect clean
// The twin of fnptr_unset.cu: mode 2 picks `twice`, so every thread calls a
// device function through the pointer, on its own element.
typedef float (*op)(float);

__device__ __noinline__ float halve(float x) { return x * 0.5f; }
__device__ __noinline__ float twice(float x) { return x * 2.0f; }

__global__ void apply(float *v, int mode)
{
    op f = 0;
    if (mode == 1)
        f = halve;
    else if (mode == 2)
        f = twice;
    unsigned i = threadIdx.x;
    float x = v[i];
    v[i] = f(x);
}
