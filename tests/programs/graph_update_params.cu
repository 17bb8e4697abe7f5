// Changing an instantiated graph between launches. A kernel node keeps the argument values it was given
// when it was added (changing the host variable afterwards changes nothing);
// cudaGraphExecKernelNodeSetParams changes the instantiated node only (the graph's node keeps its value);
// cudaGraphExecUpdate takes the parameters of a graph with the same topology, and refuses one with another
// topology (cudaErrorGraphExecUpdateFailure, cudaGraphExecUpdateErrorTopologyChanged), which leaves the
// instantiated graph as it was.
// @stdout after launch 1: 1
// @stdout after SetParams: 11 (the graph's node still adds 1)
// @stdout after update: 111
// @stdout refused update: cudaErrorGraphExecUpdateFailure, topology changed 1
// @stdout after refused update: 211
// @exit 0
// @launches 4
// @expect clean
#include <cstdio>

__global__ void add(int *x, int v) { x[threadIdx.x] += v; }

static cudaGraph_t graph_adding(int *x, int v, int nodes, cudaGraphNode_t *node) {
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    void *args[] = {&x, &v};
    cudaKernelNodeParams p = {};
    p.func = (void *)add, p.gridDim = dim3(1), p.blockDim = dim3(32), p.kernelParams = args;
    for (int i = 0; i < nodes; i++) cudaGraphAddKernelNode(node, graph, i ? node : nullptr, i ? 1 : 0, &p);
    return graph;
}

static int first(const int *x) {
    int v;
    cudaMemcpy(&v, x, sizeof v, cudaMemcpyDeviceToHost);
    return v;
}

int main() {
    int *x;
    cudaMalloc(&x, 32 * sizeof(int));
    cudaMemset(x, 0, 32 * sizeof(int));

    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    int v = 1;
    void *args[] = {&x, &v};
    cudaKernelNodeParams p = {};
    p.func = (void *)add, p.gridDim = dim3(1), p.blockDim = dim3(32), p.kernelParams = args;
    cudaGraphNode_t node;
    cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p);
    v = 50;
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, 0);
    printf("after launch 1: %d\n", first(x));

    v = 10;
    cudaGraphExecKernelNodeSetParams(exec, node, &p);
    cudaGraphLaunch(exec, 0);
    cudaKernelNodeParams kept;
    cudaGraphKernelNodeGetParams(node, &kept);
    printf("after SetParams: %d (the graph's node still adds %d)\n", first(x), *(int *)kept.kernelParams[1]);

    cudaGraphNode_t other;
    cudaGraph_t same = graph_adding(x, 100, 1, &other);
    cudaGraphExecUpdateResultInfo info;
    cudaGraphExecUpdate(exec, same, &info);
    cudaGraphLaunch(exec, 0);
    printf("after update: %d\n", first(x));

    cudaGraph_t longer = graph_adding(x, 1000, 2, &other);
    cudaError_t e = cudaGraphExecUpdate(exec, longer, &info);
    printf("refused update: %s, topology changed %d\n", cudaGetErrorName(e),
           info.result == cudaGraphExecUpdateErrorTopologyChanged);
    cudaGetLastError();
    cudaGraphLaunch(exec, 0);
    printf("after refused update: %d\n", first(x));

    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaGraphDestroy(same);
    cudaGraphDestroy(longer);
    cudaFree(x);
    return 0;
}
