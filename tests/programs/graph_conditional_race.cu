// Two bugs in conditional graph nodes. The body of an IF node holds two kernel nodes with no edge between
// them, which write the same int (line 15 against itself: a race between the two nodes). And the conditional
// node is added with no dependency on the kernel node that sets its condition (the dependency array is given
// with a count of 0), so the node may read the condition before the kernel sets it: a race between the
// kernel's cudaGraphSetConditional (line 14) and the conditional node (line 32). The printed value is what
// running the nodes in the order they were added gives.
// @stdout x = 2
// @exit 1
// @launches 3
// @expect data-race 15 15
// @expect data-race 14 32
#include <cstdio>

__global__ void decide(cudaGraphConditionalHandle handle) { cudaGraphSetConditional(handle, 1); }
__global__ void put(int *x, int value) { *x = value; }

int main() {
    int *x;
    cudaMalloc(&x, sizeof(int));
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphConditionalHandle handle;
    cudaGraphConditionalHandleCreate(&handle, g);
    cudaGraphNodeParams k = {cudaGraphNodeTypeKernel};
    k.kernel.gridDim = dim3(1), k.kernel.blockDim = dim3(1);
    void *decide_args[] = {&handle};
    k.kernel.func = (void *)decide, k.kernel.kernelParams = decide_args;
    cudaGraphNode_t first, conditional, a, b;
    cudaGraphAddNode(&first, g, nullptr, nullptr, 0, &k);
    cudaGraphNodeParams c = {cudaGraphNodeTypeConditional};
    c.conditional.handle = handle, c.conditional.type = cudaGraphCondTypeIf, c.conditional.size = 1;
    cudaGraphAddNode(&conditional, g, &first, nullptr, 0, &c);
    int one = 1, two = 2;
    void *put_one[] = {&x, &one}, *put_two[] = {&x, &two};
    k.kernel.func = (void *)put;
    k.kernel.kernelParams = put_one;
    cudaGraphAddNode(&a, c.conditional.phGraph_out[0], nullptr, nullptr, 0, &k);
    k.kernel.kernelParams = put_two;
    cudaGraphAddNode(&b, c.conditional.phGraph_out[0], nullptr, nullptr, 0, &k);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    cudaGraphLaunch(exec, 0);
    int result = 0;
    cudaMemcpy(&result, x, sizeof result, cudaMemcpyDeviceToHost);
    printf("x = %d\n", result);
    return 0;
}
