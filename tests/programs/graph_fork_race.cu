// The twin of graph_fork_join.cu with two bugs: the two kernel nodes after the memset node write the same
// bytes, and nothing orders them (line 13 against line 17); and the copy node back to the host (added at
// line 42) depends on the first kernel node only, so it reads what the second one writes (line 17).
// The printed value is what running the nodes in the order they were added gives.
// @stdout x[3] = 103
// @exit 1
// @launches 2
// @expect data-race 13 17
// @expect data-race 17 42
#include <cstdio>

__global__ void write_a(int *x) {
    x[threadIdx.x] = threadIdx.x;
}

__global__ void write_b(int *x) {
    x[threadIdx.x] = 100 + threadIdx.x;
}

int main() {
    const int n = 32;
    int *x;
    cudaMalloc(&x, n * sizeof(int));
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    cudaMemsetParams clear = {};
    clear.dst = x, clear.value = 0, clear.elementSize = 1, clear.width = n * sizeof(int), clear.height = 1;
    cudaGraphNode_t memset_node, a, b, back;
    cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &clear);
    void *args[] = {&x};
    cudaKernelNodeParams p = {};
    p.func = (void *)write_a, p.gridDim = dim3(1), p.blockDim = dim3(n), p.kernelParams = args;
    cudaGraphAddKernelNode(&a, graph, &memset_node, 1, &p);
    p.func = (void *)write_b;
    cudaGraphAddKernelNode(&b, graph, &memset_node, 1, &p);
    int host[n];
    cudaMemcpy3DParms copy = {};
    copy.srcPtr = make_cudaPitchedPtr(x, n * sizeof(int), n * sizeof(int), 1);
    copy.dstPtr = make_cudaPitchedPtr(host, n * sizeof(int), n * sizeof(int), 1);
    copy.extent = make_cudaExtent(n * sizeof(int), 1, 1);
    copy.kind = cudaMemcpyDeviceToHost;
    cudaGraphAddMemcpyNode(&back, graph, &a, 1, &copy);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, 0);
    cudaDeviceSynchronize();
    printf("x[3] = %d\n", host[3]);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(x);
    return 0;
}
