// A call gpurace's runtime does not implement stops the program (exit status 2) with a message naming the
// call and its line; what the program printed before the call is kept.
// @stdout before
// @exit 2
// @expect_error unsupported_call.cu:11: cudaGraphDebugDotPrint is not supported
#include <cstdio>

int main() {
    printf("before\n");
    cudaGraph_t graph = nullptr;
    cudaGraphDebugDotPrint(graph, "graph.dot", 0);
    printf("after\n");
    return 0;
}
