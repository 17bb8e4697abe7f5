// Calls real programs make besides the common ones: pitched allocations set with cudaMemset2D and copied
// with cudaMemcpy2DAsync, host functions and callbacks queued on a stream (each runs once the stream's work
// before it is done, so it sees the kernel's result), device limits, stream priorities and the profiler's
// start and stop.
// The pitch is the row width rounded up to 512 bytes, as a GPU pads it.
// @stdout pitch 512
// @stdout host function sees 105
// @stdout callback sees 105, status 0
// @stdout row 2: 200 201 202 ... 299
// @stdout stack 4096, heap 8388608, priorities 0..0
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>
#include <cuda_profiler_api.h>

const int W = 100, H = 3;

__global__ void number(int *rows, size_t pitch) {
    int *row = (int *)((char *)rows + blockIdx.x * pitch);
    row[threadIdx.x] = blockIdx.x * 100 + threadIdx.x;
}

int *host;

void CUDART_CB show(void *) { printf("host function sees %d\n", host[W + 5]); }

void CUDART_CB called(cudaStream_t, cudaError_t status, void *) {
    printf("callback sees %d, status %d\n", host[W + 5], (int)status);
}

int main() {
    cudaProfilerStart();
    int *rows;
    size_t pitch;
    cudaMallocPitch(&rows, &pitch, W * sizeof(int), H);
    printf("pitch %zu\n", pitch);
    cudaMemset2D(rows, pitch, 0, W * sizeof(int), H);
    cudaMallocHost(&host, W * H * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);
    number<<<H, W, 0, s>>>(rows, pitch);
    cudaMemcpy2DAsync(host, W * sizeof(int), rows, pitch, W * sizeof(int), H, cudaMemcpyDeviceToHost, s);
    cudaLaunchHostFunc(s, show, nullptr);
    cudaStreamAddCallback(s, called, nullptr, 0);
    printf("row 2: %d %d %d ... %d\n", host[2 * W], host[2 * W + 1], host[2 * W + 2], host[2 * W + W - 1]);
    cudaDeviceSetLimit(cudaLimitStackSize, 4096);
    size_t stack, heap;
    cudaDeviceGetLimit(&stack, cudaLimitStackSize);
    cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize);
    int least, greatest;
    cudaDeviceGetStreamPriorityRange(&least, &greatest);
    printf("stack %zu, heap %zu, priorities %d..%d\n", stack, heap, least, greatest);
    cudaProfilerStop();
    cudaStreamDestroy(s);
    cudaFreeHost(host);
    cudaFree(rows);
    return 0;
}
