// A program with hundreds of small launches, for benchmarks/bench_exec.py: `step` runs LAUNCHES times
// (the first argument, default 300) over 256 floats in two blocks of 128 threads, each launch reading the
// previous one's result. The kernel is race-free (a barrier orders the shared tile), so every launch is
// checked in full; the program prints a checksum of the result.
#include <cstdio>
#include <cstdlib>

#define N 256
#define BLOCK 128

__global__ void step(float *x, const float *y, float a)
{
    __shared__ float tile[BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = y[i];
    __syncthreads();
    x[i] = a * tile[(threadIdx.x + 1) % BLOCK] + 0.5f * x[i];
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 300;
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    cudaMemcpy(x, host, sizeof(host), cudaMemcpyHostToDevice);
    cudaMemcpy(y, host, sizeof(host), cudaMemcpyHostToDevice);
    for (int k = 0; k < launches; k++)
        step<<<N / BLOCK, BLOCK>>>(x, y, 1.0f / (k + 1));
    cudaMemcpy(host, x, sizeof(host), cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += host[i];
    printf("%d launches, checksum %.4f\n", launches, sum);
    return 0;
}
