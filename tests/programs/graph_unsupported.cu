// Graph calls gpurace's runtime does not implement (here a memory allocation node) stop the program (exit
// status 2) with a message naming the call and its line.
// @stdout graph created
// @exit 2
// @expect_error graph_unsupported.cu:14: cudaGraphAddMemAllocNode is not supported
#include <cstdio>

int main() {
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    printf("graph created\n");
    cudaMemAllocNodeParams params = {};
    cudaGraphNode_t node;
    cudaGraphAddMemAllocNode(&node, graph, nullptr, 0, &params);
    printf("after\n");
    return 0;
}
