// @kernel block_sum(const float*, float*, int)
// @shared block_sum 512
// @barriers block_sum 16 20
// @launch --grid 8 --block 128 --arg buf:1024:iota --arg buf:8 --arg 1024
// @expect clean
// A complete program: the reduction kernel plus host code that launches it.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void block_sum(const float* in, float* out, int n)
{
    __shared__ float buf[128];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    buf[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = 64; s > 0; s /= 2) {
        if (tid < s)
            buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = buf[0];
}

int main()
{
    const int n = 1024;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, (n / 128) * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    block_sum<<<n / 128, 128>>>(in, out, n);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(in);
    cudaFree(out);
    return 0;
}
