// Memory freed and allocated again: the program frees a buffer and puts a new allocation in the same pointer
// variable (cudaMalloc, then cudaMallocAsync after a cudaFreeAsync, then cudaMallocHost after cudaFreeHost);
// each kernel uses only live memory, so nothing is reported and the sums are exact.
// @stdout round 0: 496
// @stdout round 1: 528
// @stdout round 2: 560
// @stdout async: 592
// @stdout pinned: 624
// @exit 0
// @launches 10
// @expect clean
#include <cstdio>

// 32 threads: x[i] = i + base, then the sum into *out.
__global__ void fill(int *x, int base) { x[threadIdx.x] = threadIdx.x + base; }
__global__ void sum(const int *x, int *out) { atomicAdd(out, x[threadIdx.x]); }

int run(int *x, int *out, int base, cudaStream_t s) {
    int total;
    cudaMemsetAsync(out, 0, sizeof(int), s);
    fill<<<1, 32, 0, s>>>(x, base);
    sum<<<1, 32, 0, s>>>(x, out);
    cudaMemcpyAsync(&total, out, sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    return total;
}

int main() {
    int *x, *out;
    cudaMalloc(&out, sizeof(int));
    for (int round = 0; round < 3; round++) {
        cudaMalloc(&x, 32 * sizeof(int));
        printf("round %d: %d\n", round, run(x, out, round, 0));
        cudaFree(x);
    }
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMallocAsync(&x, 32 * sizeof(int), s);
    cudaFreeAsync(x, s);
    cudaMallocAsync(&x, 32 * sizeof(int), s);
    printf("async: %d\n", run(x, out, 3, s));
    cudaFreeAsync(x, s);
    cudaMallocHost(&x, 32 * sizeof(int));
    cudaFreeHost(x);
    cudaMallocHost(&x, 32 * sizeof(int));
    printf("pinned: %d\n", run(x, out, 4, s));
    cudaFreeHost(x);
    cudaStreamDestroy(s);
    cudaFree(out);
    return 0;
}
