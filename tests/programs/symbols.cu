// __constant__ and __device__ variables set and read by the host: cudaMemcpyToSymbol (whole and at an
// offset), cudaMemcpyFromSymbol, cudaGetSymbolAddress, and an initialised __device__ array.
// out[i] = counts[i] * scale[0] + scale[1] + offset = counts[i] * 3 + 1 + 10; the kernel then adds 100 to counts.
// @stdout out = 26 29 32 35
// @stdout counts = 105 106 107 108
// @stdout via address: 107 108
// @stdout counts[3] = 42
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__constant__ int scale[2];
__device__ int offset;
__device__ int counts[4] = {5, 6, 7, 8};

__global__ void apply(int *out) {
    int i = threadIdx.x;
    out[i] = counts[i] * scale[0] + scale[1] + offset;
    counts[i] += 100;
}

int main() {
    int s[2] = {3, 1};
    cudaMemcpyToSymbol(scale, s, sizeof s);
    int off = 10;
    cudaMemcpyToSymbol(offset, &off, sizeof off);
    int *out;
    cudaMalloc(&out, 4 * sizeof(int));
    apply<<<1, 4>>>(out);
    int h[4];
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    printf("out = %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    int c[4];
    cudaMemcpyFromSymbol(c, counts, sizeof c);
    printf("counts = %d %d %d %d\n", c[0], c[1], c[2], c[3]);
    int *p;
    cudaGetSymbolAddress((void **)&p, counts);
    cudaMemcpy(c, p + 2, 2 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("via address: %d %d\n", c[0], c[1]);
    int v = 42;
    cudaMemcpyToSymbol(counts, &v, sizeof v, 3 * sizeof(int));
    cudaMemcpyFromSymbol(&v, counts, sizeof v, 3 * sizeof(int));
    printf("counts[3] = %d\n", v);
    cudaFree(out);
    return 0;
}
