// @launch --grid 3 --block 64 --arg buf:5000:iota --arg buf:5000 --arg 5000
// @expect clean
// Grid-stride loop: 192 threads cover 5000 elements.
__global__ void grid_stride(const int* in, int* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = 3 * in[i] + (i & 7);
}
