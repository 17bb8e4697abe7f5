// @verify_launch --grid 4 --block 64
// @verify_barriers proved uniform
// @verify x race-free
// @verify y race-free
// Rounds of work with a barrier after each inner loop, compiled with
// optimisation: nvcc unrolls the inner loops by four and counts the
// unrolled loop and its remainder down to zero (`r != 0`), or rotates
// them to test `i + 1 < n` at the bottom. Every thread leaves each loop in
// the same iteration, so the barriers are uniform.
__global__ void rounds(int n, float a, float* x, float* y)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < n; r++) {
        for (int i = 0; i < n; i++)
            y[t] = a * x[t];
        __syncthreads();
#pragma unroll 1
        for (int j = 0; j < n; j++)
            x[t] = y[t] + j;
        __syncthreads();
    }
}
