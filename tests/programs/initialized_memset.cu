// The twin of uninitialized_malloc.cu: `in` is set with cudaMemset before `twice` reads it, so every byte
// the kernel reads was written. Clean.
// @stdout out[1] = 0x2020202
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void twice(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = in[i];
        out[i] = 2 * v;
    }
}

int main() {
    const int n = 256;
    int host[n];
    int *in, *out;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    cudaMemset(in, 1, n * sizeof(int));  // 0x01010101 in every element
    twice<<<2, 128>>>(in, out, n);
    cudaMemcpy(host, out, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("out[1] = 0x%x\n", host[1]);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
