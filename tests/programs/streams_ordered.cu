// Every way a program orders work across streams, each used once, and nothing racy (the Programming
// Guide's rules, README "Streams and events"):
// 1. a cudaMemsetAsync and a kernel on the same stream (stream order);
// 2. a kernel on a created (blocking) stream, then a kernel on the legacy default stream: the legacy
//    stream waits for the blocking streams' earlier work;
// 3. a kernel on the legacy stream, then a kernel on a blocking stream, which waits for it;
// 4. cudaStreamWaitEvent between two created streams;
// 5. cudaStreamSynchronize, then work on another non-blocking stream issued afterwards;
// 6. cudaDeviceSynchronize before the host reads managed memory that a kernel wrote.
// @stdout sum = 6400
// @exit 0
// @launches 5
// @expect clean
#include <cstdio>

__global__ void add(int *x, int v) { x[threadIdx.x] += v; }

__global__ void sum(const int *x, int *total) { atomicAdd(total, x[threadIdx.x]); }

int main() {
    const int n = 64;
    int *x, *total;
    cudaMalloc(&x, n * sizeof(int));
    cudaMallocManaged(&total, sizeof(int));
    *total = 0;
    cudaStream_t a, b, quiet;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaStreamCreateWithFlags(&quiet, cudaStreamNonBlocking);
    cudaEvent_t e;
    cudaEventCreate(&e);
    cudaMemsetAsync(x, 0, n * sizeof(int), a);  // 1
    add<<<1, n, 0, a>>>(x, 10);
    add<<<1, n>>>(x, 20);                        // 2
    add<<<1, n, 0, b>>>(x, 30);                  // 3
    cudaEventRecord(e, b);
    cudaStreamWaitEvent(a, e, 0);                // 4
    add<<<1, n, 0, a>>>(x, 40);
    cudaStreamSynchronize(a);                    // 5
    sum<<<1, n, 0, quiet>>>(x, total);
    cudaDeviceSynchronize();                     // 6
    printf("sum = %d\n", *total);
    cudaEventDestroy(e);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaStreamDestroy(quiet);
    cudaFree(x);
    cudaFree(total);
    return 0;
}
