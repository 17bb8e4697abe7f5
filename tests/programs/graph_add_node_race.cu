// Nodes made with cudaGraphAddNode race as those of the node calls do: a memset node and a kernel node both
// write x and no edge orders them (a data race between the kernel's store and the memset node's line); the
// copy node after both reads x. The kernel node is added after the memset node, so the replay runs the
// memset first and the copy sees the kernel's values.
// @stdout x[3] = 3
// @exit 1
// @launches 1
// @expect data-race 12 24
#include <cstdio>
#include <cstring>

__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }

int main() {
    const int n = 32;
    int *x, h[n];
    cudaMalloc(&x, n * sizeof(int));
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphNode_t set, kernel, copy;
    void *args[] = {&x};
    cudaGraphNodeParams p = {cudaGraphNodeTypeMemset};
    p.memset.dst = x, p.memset.value = 0, p.memset.elementSize = 1, p.memset.width = n * sizeof(int), p.memset.height = 1;
    cudaGraphAddNode(&set, g, nullptr, nullptr, 0, &p);
    p = {cudaGraphNodeTypeKernel};
    p.kernel.func = (void *)fill, p.kernel.gridDim = dim3(1), p.kernel.blockDim = dim3(n), p.kernel.kernelParams = args;
    cudaGraphAddNode(&kernel, g, nullptr, nullptr, 0, &p);
    cudaGraphNode_t both[] = {set, kernel};
    cudaGraphAddMemcpyNode1D(&copy, g, both, 2, h, x, sizeof h, cudaMemcpyDeviceToHost);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    cudaGraphLaunch(exec, 0);
    cudaStreamSynchronize(0);
    printf("x[3] = %d\n", h[3]);
    return 0;
}
