// @verify a race-free
// strided_loop.cu for every launch: the stride blockDim.x * gridDim.x is a
// symbol. Two threads' indices differ by less than one stride, and within
// one thread by whole strides (the induction variable does not wrap around),
// so they never meet.
__global__ void scale(float* a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        a[i] = a[i] * 2.0f;
}
