// A pipeline on memory only kernels write: `fill` writes every element of `tmp` (never copied into), then
// `scale` reads it and writes `out`, which the host copies back. What a kernel wrote is initialised for
// the kernels after it: clean.
// @stdout out[10] = 30
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void fill(int *tmp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tmp[i] = i;
}

__global__ void scale(const int *tmp, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * tmp[i];
}

int main() {
    const int n = 1000;
    int *tmp, *out;
    cudaMalloc(&tmp, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    fill<<<(n + 255) / 256, 256>>>(tmp, n);
    scale<<<(n + 255) / 256, 256>>>(tmp, out, n);
    int host[n];
    cudaMemcpy(host, out, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("out[10] = %d\n", host[10]);
    cudaFree(tmp);
    cudaFree(out);
    return 0;
}
