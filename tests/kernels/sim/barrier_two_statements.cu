// @launch --grid 2 --block 64 --arg buf:128
// @expect barrier-divergence 10 13
// The two halves of each block reach __syncthreads() at two different statements.
__global__ void two_barriers(int* out)
{
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    if (t % 2 == 0) {
        out[g] = t;
        __syncthreads();
    } else {
        out[g] = -t;
        __syncthreads();
    }
}
