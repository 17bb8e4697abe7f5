// @launch --grid 2 --block 64
// @expect clean
// With no --arg, the `__device__` pointer gets an automatic buffer; every
// thread writes only its own element, and `n` (a `__device__` int, not a
// pointer) keeps its initial value.
__device__ float *out;
__device__ int n = 128;
__global__ void fill(float value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value * i;
}
