// A host-side bug no single-launch check can see: cudaMemcpy writes 65 floats into a 64-float allocation.
// The copy fails with cudaErrorInvalidValue, as a CUDA runtime fails it, and is a finding at its line.
// @stdout invalid argument
// @exit 1
// @expect out-of-bounds 12
#include <cstdio>

int main() {
    float *d;
    cudaMalloc(&d, 64 * sizeof(float));
    float h[65] = {0};
    cudaError_t e = cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    printf("%s\n", cudaGetErrorString(e));
    cudaFree(d);
    return 0;
}
