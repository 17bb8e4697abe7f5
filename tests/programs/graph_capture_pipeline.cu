// A pipeline captured from one stream (copy in, two kernels, copy out) and launched three times with new
// input each time: every launch runs the whole pipeline, after the previous one, and the program checks its
// results. While capturing, the stream says so and nothing runs.
// @stdout capturing: 1, nodes: 4
// @stdout run 0: out[5] = 15 ok
// @stdout run 1: out[5] = 25 ok
// @stdout run 2: out[5] = 35 ok
// @exit 0
// @launches 6
// @expect clean
#include <cstdio>

__global__ void scale(int *x, int k) { x[threadIdx.x] *= k; }

__global__ void offset(int *x, int d) { x[threadIdx.x] += d; }

int main() {
    const int n = 32;
    int host[n], out[n];
    int *x;
    cudaMalloc(&x, n * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaGraph_t graph;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(x, host, sizeof host, cudaMemcpyHostToDevice, s);
    scale<<<1, n, 0, s>>>(x, 2);
    offset<<<1, n, 0, s>>>(x, 5);
    cudaMemcpyAsync(out, x, sizeof out, cudaMemcpyDeviceToHost, s);
    cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(s, &status);
    cudaStreamEndCapture(s, &graph);
    size_t nodes = 0;
    cudaGraphGetNodes(graph, nullptr, &nodes);
    printf("capturing: %d, nodes: %zu\n", (int)status, nodes);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    for (int run = 0; run < 3; run++) {
        for (int i = 0; i < n; i++) host[i] = i + 5 * run;
        cudaGraphLaunch(exec, s);
        cudaStreamSynchronize(s);
        bool ok = true;
        for (int i = 0; i < n; i++) ok = ok && out[i] == 2 * host[i] + 5;
        printf("run %d: out[5] = %d %s\n", run, out[5], ok ? "ok" : "WRONG");
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    cudaFree(x);
    return 0;
}
