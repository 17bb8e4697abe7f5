// Device-side printf: the text comes out where a GPU's runtime flushes its printf buffer: the first
// kernel's at the second launch, the second's at cudaDeviceSynchronize, after the host's own line printed
// before it. One line per printing thread, in thread order. The conversions kernels commonly use, with
// widths, precision and length modifiers.
// @stdout thread 0: int -7, unsigned 4000000000, hex 0xff, long 123456789012, char Z
// @stdout thread 1: int -7, unsigned 4000000000, hex 0xff, long 123456789012, char Z
// @stdout host first
// @stdout 002.50|3.25e+00|0.125|name=gpurace|%|   42|
// @stdout after sync
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void conversions() {
    printf("thread %d: int %d, unsigned %u, hex %#x, long %ld, char %c\n", threadIdx.x, -7, 4000000000u, 255,
           123456789012L, 'Z');
}

__global__ void floats(const char *name) {
    float f = 2.5f;
    printf("%06.2f|%.2e|%g|name=%s|%%|%*d|\n", f, 3.25, 0.125, name, 5, 42);
}

__device__ const char label[] = "gpurace";

int main() {
    conversions<<<1, 2>>>();
    const char *name;
    cudaGetSymbolAddress((void **)&name, label);
    floats<<<1, 1>>>(name);
    printf("host first\n");
    cudaDeviceSynchronize();
    printf("after sync\n");
    return 0;
}
