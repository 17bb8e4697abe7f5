// The fixed twin of device_array_overrun.cu: the index wraps, every read is inside `a`, and nothing is
// reported. The arrays are filled and read back by symbol, and a pointer table initialised with their
// addresses (`&a[1]`) is read by the kernel, so copies, symbol addresses and pointer initializers all
// reach the arrays where the device addresses them.
// @stdout b[0] = 1, b[63] = 0, *table[0] = 1: correct
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__device__ float a[64];
__device__ float b[64];
__device__ float *table[2] = {&a[1], &b[0]};
__device__ float first;

__global__ void rotate(int shift) {
    b[threadIdx.x] = a[(threadIdx.x + shift) % 64];
    if (threadIdx.x == 0) first = *table[0];
}

int main() {
    float host[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i;
    cudaMemcpyToSymbol(a, host, sizeof host);
    rotate<<<1, 64>>>(129);
    cudaMemcpyFromSymbol(host, b, sizeof host);
    float *b_address, one;
    cudaGetSymbolAddress((void **)&b_address, b);
    float last;
    cudaMemcpy(&last, b_address + 63, sizeof last, cudaMemcpyDeviceToHost);
    cudaMemcpyFromSymbol(&one, first, sizeof one);
    bool ok = last == host[63];
    for (int i = 0; i < 64; i++) ok = ok && host[i] == (float)((i + 1) % 64);
    printf("b[0] = %.0f, b[63] = %.0f, *table[0] = %.0f: %s\n", host[0], last, one, ok && one == 1 ? "correct" : "WRONG");
    return 0;
}
