// @kernel stencil(const int*, int*, int)
// @shared stencil 536
// @barriers stencil 20
// @launch --grid 2 --block 128 --arg buf:262:iota --arg buf:256 --arg 256
// @expect clean
// 1D stencil of radius 3 with halo cells loaded into shared memory.
#define RADIUS 3
#define BLOCK 128

__global__ void stencil(const int* in, int* out, int n)
{
    __shared__ int tmp[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    tmp[l] = in[g + RADIUS];
    if (threadIdx.x < RADIUS) {
        tmp[l - RADIUS] = in[g];
        tmp[l + BLOCK] = in[g + BLOCK + RADIUS];
    }
    __syncthreads();
    int sum = 0;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k)
        sum += tmp[l + k];
    out[g] = sum;
}
