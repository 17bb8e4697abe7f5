// Managed memory: the host fills a cudaMallocManaged buffer and a __managed__ variable directly, a kernel
// squares the elements and sums them with atomics, and the host reads both after cudaDeviceSynchronize.
// total = 0 + 1 + 4 + ... + 81 = 285.
// @stdout x[9] = 81
// @stdout total = 285
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__managed__ int total;

__global__ void square(int *x, int n) {
    int i = threadIdx.x;
    if (i < n) {
        x[i] = x[i] * x[i];
        atomicAdd(&total, x[i]);
    }
}

int main() {
    const int n = 10;
    int *x;
    cudaMallocManaged(&x, n * sizeof(int));
    for (int i = 0; i < n; i++) x[i] = i;
    total = 0;
    square<<<1, 32>>>(x, n);
    cudaDeviceSynchronize();
    printf("x[9] = %d\n", x[9]);
    printf("total = %d\n", total);
    cudaFree(x);
    return 0;
}
