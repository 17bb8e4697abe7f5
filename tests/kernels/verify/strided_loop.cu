// @verify_launch --grid 4 --block 128
// @verify a race-free
// A grid-stride loop: i = tid + k * stride is an induction variable, so the
// accesses of two threads never meet, for every n and every iteration.
__global__ void scale(float* a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        a[i] = a[i] * 2.0f;
}
