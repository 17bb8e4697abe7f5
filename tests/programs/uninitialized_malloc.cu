// cudaMalloc memory holds garbage until written: `twice` reads `in`, which the host allocated and never
// wrote (the copy of the input went to `out` by mistake). Reported at the kernel's read, naming the
// allocation. The simulated device's fresh memory reads as zeros, so the output is deterministic here.
// @stdout out[1] = 0
// @exit 1
// @launches 1
// @expect uninitialized-read 14
#include <cstdio>

__global__ void twice(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v =
            in[i];
        out[i] = 2 * v;
    }
}

int main() {
    const int n = 256;
    int host[n];
    for (int i = 0; i < n; i++) host[i] = i;
    int *in, *out;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    cudaMemcpy(out, host, n * sizeof(int), cudaMemcpyHostToDevice);
    twice<<<2, 128>>>(in, out, n);
    cudaMemcpy(host, out, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("out[1] = %d\n", host[1]);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
