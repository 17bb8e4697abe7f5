// @launch --grid 1 --block 64 --arg buf:64 --arg 3
// @expect invalid-call 20
// A function pointer chosen by a mode that has no case for 3: it stays null,
// and the call through it (line 20) faults on a GPU. The twin of
// fnptr_chosen.cu, which passes a mode that has a case.
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
