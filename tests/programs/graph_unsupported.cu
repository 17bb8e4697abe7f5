// Graph nodes gpurace's runtime does not implement (here an external semaphore node, made with the generic
// cudaGraphAddNode) stop the program (exit status 2) with a message naming the call, the node and its line.
// @stdout graph created
// @exit 2
// @expect_error graph_unsupported.cu:14: cudaGraphAddNode (external semaphore signal node) is not supported
#include <cstdio>

int main() {
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    printf("graph created\n");
    cudaGraphNodeParams params = {cudaGraphNodeTypeExtSemaphoreSignal};
    cudaGraphNode_t node;
    cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params);
    printf("after\n");
    return 0;
}
