// @verify_launch --grid 2 --block 64
// @verify x race-free
// @verify y race-free
// `assert` compiles to a call of `__assertfail`, whose body is not in the
// file: it touches no memory of the kernel (it reports and stops the
// launch), so verify carries on past it.
__global__ void scale(float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    y[i] = 2.0f * x[i];
}
