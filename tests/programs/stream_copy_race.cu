// A pipeline split over two streams without an event between them: `produce` writes `out` on stream a,
// and a cudaMemcpyAsync on stream b copies `out` to the host. Nothing makes stream b wait for stream a, so
// on a GPU the copy may run before or during the kernel: a data race between the kernel's store (line 15)
// and the copy (line 30). gpurace runs the work in issue order, so the copy sees the kernel's results.
// The second copy waits for an event recorded after `produce` (line 34), and is not reported.
// @stdout out[255] = 510
// @stdout again[255] = 510
// @exit 1
// @launches 1
// @expect data-race 15 30
#include <cstdio>

__global__ void produce(int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2 * i;
}

int main() {
    const int n = 256;
    int *out, *host;
    cudaMalloc(&out, n * sizeof(int));
    cudaMallocHost(&host, n * sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaEvent_t done;
    cudaEventCreate(&done);
    produce<<<n / 64, 64, 0, a>>>(out);
    cudaEventRecord(done, a);
    cudaMemcpyAsync(host, out, n * sizeof(int), cudaMemcpyDeviceToHost, b);
    cudaStreamSynchronize(b);
    printf("out[255] = %d\n", host[255]);
    cudaStreamWaitEvent(b, done, 0);
    cudaMemcpyAsync(host, out, n * sizeof(int), cudaMemcpyDeviceToHost, b);
    cudaStreamSynchronize(b);
    printf("again[255] = %d\n", host[255]);
    cudaEventDestroy(done);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFreeHost(host);
    cudaFree(out);
    return 0;
}
