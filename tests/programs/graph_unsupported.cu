// Graph calls gpurace's runtime does not implement (here the conditional handle of a conditional node) stop
// the program (exit status 2) with a message naming the call and its line.
// @stdout graph created
// @exit 2
// @expect_error graph_unsupported.cu:13: cudaGraphConditionalHandleCreate is not supported
#include <cstdio>

int main() {
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    printf("graph created\n");
    cudaGraphConditionalHandle handle;
    cudaGraphConditionalHandleCreate(&handle, graph, 0, 0);
    printf("after\n");
    return 0;
}
