// @kernel saxpy(int, float, const float*, float*)
// @launch --grid 2 --block 64 --arg 1000 --arg 2.0 --arg buf:1000:iota --arg buf:1000
// @expect clean
// saxpy over a grid-stride loop with __restrict__ pointers.
__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
