// cdp_last_block_fenced.cu without its two __threadfence() calls: the atomicAdd on the ticket is relaxed, so
// nothing orders the other blocks' partials (line 22) before the last block's launch: they race with the
// child's reads (line 15). On a GPU the program usually prints the right total; the PTX memory model does not
// promise it (the child sees only what the launching thread saw, and it saw no release).
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout total: 36
// @exit 1
// @launches 2
// @expect data-race 15 22
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
    if (atomicAdd(tickets, 1) == gridDim.x - 1) {
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
