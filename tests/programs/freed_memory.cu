// Freed memory used again: a copy into a freed buffer (use after free), then a second cudaFree (double free).
// Both calls fail with cudaErrorInvalidValue.
// @stdout copy: cudaErrorInvalidValue
// @stdout free: cudaErrorInvalidValue
// @exit 1
// @expect use-after-free 15
// @expect invalid-free 16
#include <cstdio>

int main() {
    int *d;
    int h[4] = {1, 2, 3, 4};
    cudaMalloc(&d, sizeof h);
    cudaFree(d);
    cudaError_t copy = cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    cudaError_t again = cudaFree(d);
    printf("copy: %s\n", cudaGetErrorName(copy));
    printf("free: %s\n", cudaGetErrorName(again));
    return 0;
}
