// @verify_launch --grid 4 --block 64
// @verify_barriers divergence possible 16
// @verify x race-free
// @verify y race-free
// As loop_rounds_optimised.cu, optimised the same way, but thread 0 of
// each block skips the second barrier in the last round while the other
// threads wait there.
__global__ void rounds(int n, float a, float* x, float* y)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < n; r++) {
        for (int i = 0; i < n; i++)
            y[t] = a * x[t];
        __syncthreads();
        if (threadIdx.x != 0 || r + 1 < n)
            __syncthreads();
    }
}
