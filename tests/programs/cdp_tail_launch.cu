// CUDA Dynamic Parallelism: a tail launch reads what the whole parent grid wrote, with no barrier: four blocks
// each write their elements, and thread 0 of block 0 tail-launches `sum`, which runs only when the parent grid
// (every block of it) has ended. Clean; the sum is 0 + 1 + ... + 127.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout sum: 8128
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void sum(const int *data, int n, int *out) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += data[i];
    *out = s;
}

__global__ void fill(int *data, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = i;
    if (i == 0)
        sum<<<1, 1, 0, cudaStreamTailLaunch>>>(data, gridDim.x * blockDim.x, out);
}

int main() {
    int *data, *out;
    cudaMalloc(&data, 128 * sizeof(int));
    cudaMalloc(&out, sizeof(int));
    fill<<<4, 32>>>(data, out);
    int result = 0;
    cudaMemcpy(&result, out, sizeof result, cudaMemcpyDeviceToHost);
    printf("sum: %d\n", result);
    return 0;
}
