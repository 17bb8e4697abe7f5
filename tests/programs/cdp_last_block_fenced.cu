// CUDA Dynamic Parallelism after a "last block" count: each block publishes its partial result, a
// __threadfence() and an atomicAdd on a ticket release it, and the block that takes the last ticket fences
// (acquiring every earlier block's release) and launches `total`, which reads every block's partial. The
// partials happen before the launch through the launching thread, so the child sees them: clean. The same
// without the fences is cdp_last_block_unfenced.cu.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout total: 36
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void total(const int *partial, int n, int *out) {
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += partial[i];
    *out = sum;
}

__global__ void partials(int *partial, unsigned *tickets, int *out) {
    if (threadIdx.x != 0)
        return;
    partial[blockIdx.x] = blockIdx.x + 1;
    __threadfence();
    if (atomicAdd(tickets, 1) == gridDim.x - 1) {
        __threadfence();
        total<<<1, 1>>>(partial, gridDim.x, out);
    }
}

int main() {
    int *partial, *out;
    unsigned *tickets;
    cudaMalloc(&partial, 8 * sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaMalloc(&tickets, sizeof(unsigned));
    cudaMemset(tickets, 0, sizeof(unsigned));
    partials<<<8, 32>>>(partial, tickets, out);
    int result = 0;
    cudaMemcpy(&result, out, sizeof result, cudaMemcpyDeviceToHost);
    printf("total: %d\n", result);
    return 0;
}
