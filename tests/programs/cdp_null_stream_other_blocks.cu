// CUDA Dynamic Parallelism: the same launch into the NULL stream as the tail launch of cdp_tail_launch.cu, a
// race. The NULL stream is ordered only within a block, and a child sees only what its launching thread (and,
// through a barrier, its block) did before the launch: every other thread writes its element (line 21) concurrently
// with `sum` reading them (line 15), block 0 too, as no barrier comes between.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout sum: 8128
// @exit 1
// @launches 2
// @expect data-race 15 21
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
        sum<<<1, 1>>>(data, gridDim.x * blockDim.x, out);
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
