// Capture across two streams: an event recorded on the capturing stream, waited for by a second stream,
// brings that stream into the capture (a fork); an event recorded on it, waited for by the first, joins it
// back. The two halves are written on different streams, the sum after the join: clean, and the graph
// computes what the streams would. A second capture forks without joining: cudaStreamEndCapture fails
// with cudaErrorStreamCaptureUnjoined, returns no graph, and both streams stop capturing.
// @stdout s2 joined capture: 1, dependencies: 1
// @stdout nodes 5
// @stdout launch 0: sum = 2016
// @stdout launch 1: sum = 2016
// @stdout unjoined: cudaErrorStreamCaptureUnjoined, graph 0, s2 capturing 0
// @exit 0
// @launches 6
// @expect clean
#include <cstdio>

__global__ void fill_half(int *x, int first) { x[first + threadIdx.x] = first + threadIdx.x; }

__global__ void sum(const int *x, int n, int *total) {
    if (threadIdx.x == 0) {
        int s = 0;
        for (int i = 0; i < n; i++) s += x[i];
        *total = s;
    }
}

int main() {
    const int n = 64;
    int *x, *total, result = -1;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEvent_t fork, joined;
    cudaEventCreate(&fork);
    cudaEventCreate(&joined);

    cudaGraph_t graph;
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaMemsetAsync(x, 0, n * sizeof(int), s1);
    cudaEventRecord(fork, s1);
    cudaStreamWaitEvent(s2, fork, 0);
    cudaStreamCaptureStatus status;
    unsigned long long id1 = 0, id2 = 0;
    size_t deps = 0;
    cudaStreamGetCaptureInfo(s1, &status, &id1);
    cudaStreamGetCaptureInfo(s2, &status, &id2, nullptr, nullptr, nullptr, &deps);
    printf("s2 joined capture: %d, dependencies: %zu\n", id1 == id2 && status == cudaStreamCaptureStatusActive, deps);
    fill_half<<<1, n / 2, 0, s1>>>(x, 0);
    fill_half<<<1, n / 2, 0, s2>>>(x, n / 2);
    cudaEventRecord(joined, s2);
    cudaStreamWaitEvent(s1, joined, 0);
    sum<<<1, 32, 0, s1>>>(x, n, total);
    cudaMemcpyAsync(&result, total, sizeof(int), cudaMemcpyDeviceToHost, s1);
    cudaStreamEndCapture(s1, &graph);
    size_t nodes = 0;
    cudaGraphGetNodes(graph, nullptr, &nodes);
    printf("nodes %zu\n", nodes);

    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    for (int launch = 0; launch < 2; launch++) {
        result = -1;
        cudaGraphLaunch(exec, s1);
        cudaStreamSynchronize(s1);
        printf("launch %d: sum = %d\n", launch, result);
    }

    cudaGraph_t unjoined = graph;
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaEventRecord(fork, s1);
    cudaStreamWaitEvent(s2, fork, 0);
    fill_half<<<1, n / 2, 0, s2>>>(x, 0);
    cudaError_t e = cudaStreamEndCapture(s1, &unjoined);
    cudaStreamIsCapturing(s2, &status);
    printf("unjoined: %s, graph %d, s2 capturing %d\n", cudaGetErrorName(e), unjoined != nullptr, (int)status);

    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFree(x);
    cudaFree(total);
    return 0;
}
