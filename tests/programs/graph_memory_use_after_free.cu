// A kernel node reads a graph allocation after the free node that ends it (the kernel node depends on the
// free node): the address space is unmapped when the kernel runs, so its load faults, as on a GPU: an
// out-of-bounds finding whose cause names the freed graph allocation, and the illegal address error at the
// next synchronising call. The first kernel node uses the allocation between its allocation and free nodes.
// @with parts/graph_nodes.cu
// @stdout launched: cudaSuccess
// @stdout synchronized: cudaErrorIllegalAddress
// @exit 1
// @launches 2
// @expect out-of-bounds 14
#include <cstdio>

__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }
__global__ void copy_out(const int *x, int *out) { out[threadIdx.x] = x[threadIdx.x]; }

cudaGraphNode_t add_allocation(cudaGraph_t g, const cudaGraphNode_t *dep, size_t bytes, void **ptr);
cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, void *func, void **args, unsigned threads);

int main() {
    int *out, *x;
    cudaMalloc(&out, 32 * sizeof(int));
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphNode_t free_node, alloc_node = add_allocation(g, nullptr, 32 * sizeof(int), (void **)&x);
    void *fill_args[] = {&x}, *copy_args[] = {&x, &out};
    cudaGraphNode_t fill_node = add_kernel(g, &alloc_node, (void *)fill, fill_args, 32);
    cudaGraphAddMemFreeNode(&free_node, g, &fill_node, 1, x);
    add_kernel(g, &free_node, (void *)copy_out, copy_args, 32);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    printf("launched: %s\n", cudaGetErrorName(cudaGraphLaunch(exec, 0)));
    printf("synchronized: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(out);
    return 0;
}
