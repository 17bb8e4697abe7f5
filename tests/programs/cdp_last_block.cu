// CUDA Dynamic Parallelism after a "last block" count, with and without fences. Each block publishes its
// partial result and takes a ticket with atomicAdd; the block that takes the last ticket launches `total`,
// which reads every block's partial. In `fenced`, a __threadfence() before the atomicAdd releases the partial
// and one after it acquires every earlier block's release: the partials happen before the launch through the
// launching thread, and the child sees them: clean. In `unfenced` the atomicAdd is relaxed, so nothing orders
// the other blocks' partials (line 36) before the launch: they race with the child's reads (line 18). On a GPU
// it usually prints the right total; the PTX memory model does not promise it.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout fenced: 36 unfenced: 36
// @exit 1
// @launches 4
// @expect data-race 18 36
#include <cstdio>

__global__ void total(const int *partial, int n, int *out) {
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += partial[i];
    *out = sum;
}

__global__ void fenced(int *partial, unsigned *tickets, int *out) {
    if (threadIdx.x != 0)
        return;
    partial[blockIdx.x] = blockIdx.x + 1;
    __threadfence();
    if (atomicAdd(tickets, 1) == gridDim.x - 1) {
        __threadfence();
        total<<<1, 1>>>(partial, gridDim.x, out);
    }
}

__global__ void unfenced(int *partial, unsigned *tickets, int *out) {
    if (threadIdx.x != 0)
        return;
    partial[blockIdx.x] = blockIdx.x + 1;
    if (atomicAdd(tickets, 1) == gridDim.x - 1)
        total<<<1, 1>>>(partial, gridDim.x, out);
}

int main() {
    int *partial, *out, result[2];
    unsigned *tickets;
    cudaMalloc(&partial, 2 * 8 * sizeof(int));
    cudaMalloc(&out, 2 * sizeof(int));
    cudaMalloc(&tickets, 2 * sizeof(unsigned));
    cudaMemset(tickets, 0, 2 * sizeof(unsigned));
    fenced<<<8, 32>>>(partial, tickets, &out[0]);
    unfenced<<<8, 32>>>(partial + 8, tickets + 1, &out[1]);
    cudaMemcpy(result, out, sizeof result, cudaMemcpyDeviceToHost);
    printf("fenced: %d unfenced: %d\n", result[0], result[1]);
    return 0;
}
