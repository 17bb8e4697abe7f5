// The host reads results before waiting for them. A kernel on stream s writes managed memory and an
// asynchronous copy on s fills a page-locked buffer; the host reads both right away, then synchronises
// and reads them again. The first two reads (lines 28 and 29) race with the kernel's store (line 14) and
// the copy (line 27); the reads after cudaStreamSynchronize (line 31) are ordered. gpurace runs the work
// at once, so every read sees the final values.
// @stdout early 42 7
// @stdout late 42 7
// @exit 1
// @launches 1
// @expect data-race 14 28
// @expect data-race 27 29
#include <cstdio>

__global__ void answer(int *x) { x[threadIdx.x] = 42; }

int main() {
    int *managed, *pinned, *device;
    cudaMallocManaged(&managed, 32 * sizeof(int));
    cudaMallocHost(&pinned, 32 * sizeof(int));
    cudaMalloc(&device, 32 * sizeof(int));
    int seven[32];
    for (int i = 0; i < 32; i++) seven[i] = 7;
    cudaMemcpy(device, seven, sizeof seven, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    answer<<<1, 32, 0, s>>>(managed);
    cudaMemcpyAsync(pinned, device, sizeof seven, cudaMemcpyDeviceToHost, s);
    int a = managed[3];
    int b = pinned[3];
    printf("early %d %d\n", a, b);
    cudaStreamSynchronize(s);
    printf("late %d %d\n", managed[3], pinned[3]);
    cudaStreamDestroy(s);
    cudaFree(managed);
    cudaFreeHost(pinned);
    cudaFree(device);
    return 0;
}
