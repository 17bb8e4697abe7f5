// Races that graphs hide: in a capture, a stream that joined the capture before any work (the fork event
// was recorded first) does not wait for the work captured afterwards on the origin stream, so the two
// kernels writing x (lines 14 and 16) are independent nodes of the graph. And a launched graph is ordered
// only with its own stream's work: `total` on another stream reads y (line 20) while the graph's last node
// may still be writing it (line 14).
// The printed values are what running the work in issue order gives.
// @stdout x[0] = 2, total = 32
// @exit 1
// @launches 4
// @expect data-race 14 16
// @expect data-race 14 20
#include <cstdio>

__global__ void write_ones(int *x) { x[threadIdx.x] = 1; }

__global__ void write_twos(int *x) { x[threadIdx.x] = 2; }

__global__ void total(const int *y, int *out) {
    int s = 0;
    for (int i = 0; i < 32; i++) s += y[i];
    *out = s;
}

int main() {
    int *x, *y, *out;
    cudaMalloc(&x, 32 * sizeof(int));
    cudaMalloc(&y, 32 * sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaStream_t s1, s2, s3;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaStreamCreate(&s3);
    cudaEvent_t fork, join;
    cudaEventCreate(&fork);
    cudaEventCreate(&join);
    cudaGraph_t graph;
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaEventRecord(fork, s1);
    cudaStreamWaitEvent(s2, fork, 0);
    write_ones<<<1, 32, 0, s1>>>(x);
    write_twos<<<1, 32, 0, s2>>>(x);
    cudaEventRecord(join, s2);
    cudaStreamWaitEvent(s1, join, 0);
    write_ones<<<1, 32, 0, s1>>>(y);
    cudaStreamEndCapture(s1, &graph);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, s1);
    total<<<1, 1, 0, s3>>>(y, out);
    cudaDeviceSynchronize();
    int first, sum;
    cudaMemcpy(&first, x, sizeof first, cudaMemcpyDeviceToHost);
    cudaMemcpy(&sum, out, sizeof sum, cudaMemcpyDeviceToHost);
    printf("x[0] = %d, total = %d\n", first, sum);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return 0;
}
