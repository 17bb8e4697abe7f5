// @kernel vec_add(?, ?, ?, ?)
// @kernel fill(?, ?)
// @launch --kernel vec_add --grid 1 --block 128 --arg buf:100:iota --arg buf:100:iota --arg buf:100 --arg 100
// @expect clean
// Unmangled kernels: PTX keeps their names but not their parameter types.
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void fill(int* p, int value)
{
    p[threadIdx.x] = value;
}
