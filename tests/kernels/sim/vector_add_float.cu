// @launch --grid 4 --block 256 --arg buf:1000:iota --arg buf:1000:iota --arg buf:1000 --arg 1000
// @expect clean
// c = a + b over float, with a tail guard (1000 elements, 1024 threads).
__global__ void vadd(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + 0.5f * b[i];
}
