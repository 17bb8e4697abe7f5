// A launch replayed from an earlier identical one (README "Repeated launches") keeps that launch's footprint
// for the stream-order checks: `produce` runs on stream a three times with the same arguments, and each
// time a cudaMemcpyAsync on stream b, which nothing orders after it, copies its output to the host. The
// third launch is replayed (the first of a configuration is never remembered, the second is), and its race
// with the third copy is found as the others are: one finding between the kernel's store (line 17) and the
// copy (line 31), with a count of three (test_programs.py).
// @stdout out[255] = 510
// @stdout out[255] = 510
// @stdout out[255] = 510
// @exit 1
// @launches 3
// @replayed 1
// @expect data-race 17 31
#include <cstdio>

__global__ void produce(int *out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
}

int main() {
    const int n = 256;
    int *out, *host;
    cudaMalloc(&out, n * sizeof(int));
    cudaMallocHost(&host, n * sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    for (int round = 0; round < 3; round++) {
        produce<<<n / 64, 64, 0, a>>>(out);
        host[255] = 0;
        cudaMemcpyAsync(host, out, n * sizeof(int), cudaMemcpyDeviceToHost, b);
        cudaDeviceSynchronize();
        printf("out[255] = %d\n", host[255]);
    }
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFreeHost(host);
    cudaFree(out);
    return 0;
}
