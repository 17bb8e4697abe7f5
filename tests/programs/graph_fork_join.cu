// An explicit graph that forks and joins: a memset node, then two kernel nodes that each write one half of
// the buffer, then a kernel node that depends on both and sums the halves, then a copy node back to the host.
// The branches are unordered but touch disjoint bytes, and the join orders both before the sum: clean.
// The graph is launched twice; the second launch is ordered after the first.
// @stdout nodes 5, roots 1, edges 5
// @stdout launch 0: sum = 2016
// @stdout launch 1: sum = 2016
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
    int *x, *total;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);

    cudaMemsetParams clear = {};
    clear.dst = x, clear.value = 0, clear.elementSize = 4, clear.width = n, clear.height = 1;
    cudaGraphNode_t memset_node, low, high, join, back;
    cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &clear);

    int first_low = 0, first_high = n / 2;
    void *low_args[] = {&x, &first_low};
    void *high_args[] = {&x, &first_high};
    cudaKernelNodeParams p = {};
    p.func = (void *)fill_half, p.gridDim = dim3(1), p.blockDim = dim3(n / 2), p.kernelParams = low_args;
    cudaGraphAddKernelNode(&low, graph, &memset_node, 1, &p);
    p.kernelParams = high_args;
    cudaGraphAddKernelNode(&high, graph, &memset_node, 1, &p);

    int count = n;
    void *sum_args[] = {&x, &count, &total};
    cudaKernelNodeParams q = {};
    q.func = (void *)sum, q.gridDim = dim3(1), q.blockDim = dim3(32), q.kernelParams = sum_args;
    cudaGraphNode_t halves[] = {low, high};
    cudaGraphAddKernelNode(&join, graph, halves, 2, &q);

    int result = -1;
    cudaGraphAddMemcpyNode1D(&back, graph, &join, 1, &result, total, sizeof(int), cudaMemcpyDeviceToHost);

    size_t nodes = 0, roots = 0, edges = 0;
    cudaGraphGetNodes(graph, nullptr, &nodes);
    cudaGraphGetRootNodes(graph, nullptr, &roots);
    cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges);
    printf("nodes %zu, roots %zu, edges %zu\n", nodes, roots, edges);

    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int launch = 0; launch < 2; launch++) {
        cudaGraphLaunch(exec, s);
        cudaStreamSynchronize(s);
        printf("launch %d: sum = %d\n", launch, result);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    cudaFree(x);
    cudaFree(total);
    return 0;
}
