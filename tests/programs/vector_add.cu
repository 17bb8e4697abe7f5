// The classic first program: allocate, copy in, launch, copy out, and check the result itself.
// 1000 elements in 8 blocks of 128 threads (the last 24 threads have nothing to do).
// @stdout c[0] = 0, c[999] = 2997
// @stdout sum = 1498500
// @stdout launch: no error
// @stdout PASSED
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>
#include <cstdlib>

__global__ void add(const int *a, const int *b, int *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1000;
    int *a = (int *)malloc(n * sizeof(int)), *b = (int *)malloc(n * sizeof(int)), *c = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }
    int *da, *db, *dc;
    cudaMalloc(&da, n * sizeof(int));
    cudaMalloc(&db, n * sizeof(int));
    cudaMalloc(&dc, n * sizeof(int));
    cudaMemcpy(da, a, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, n * sizeof(int), cudaMemcpyHostToDevice);
    add<<<(n + 127) / 128, 128>>>(da, db, dc, n);
    cudaError_t launch = cudaGetLastError();
    cudaMemcpy(c, dc, n * sizeof(int), cudaMemcpyDeviceToHost);
    long long sum = 0;
    int ok = 1;
    for (int i = 0; i < n; i++) {
        sum += c[i];
        ok &= c[i] == 3 * i;
    }
    printf("c[0] = %d, c[999] = %d\n", c[0], c[999]);
    printf("sum = %lld\n", sum);
    printf("launch: %s\n", cudaGetErrorString(launch));
    printf("%s\n", ok ? "PASSED" : "FAILED");
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    free(a);
    free(b);
    free(c);
    return 0;
}
