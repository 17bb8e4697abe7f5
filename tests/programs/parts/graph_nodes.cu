// Graph nodes made with the explicit API, for the graph memory programs (graph_memory_*.cu).
#include <cuda_runtime.h>

// An allocation node of `bytes` of the device's memory after `dep` (none when null); its address in `*ptr`.
cudaGraphNode_t add_allocation(cudaGraph_t g, const cudaGraphNode_t *dep, size_t bytes, void **ptr) {
    cudaMemAllocNodeParams alloc = {};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
    alloc.bytesize = bytes;
    cudaGraphNode_t node;
    cudaGraphAddMemAllocNode(&node, g, dep, dep ? 1 : 0, &alloc);
    *ptr = alloc.dptr;
    return node;
}

// A kernel node of one block of `threads` after `dep`.
cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, void *func, void **args, unsigned threads) {
    cudaKernelNodeParams k = {};
    k.func = func, k.gridDim = dim3(1), k.blockDim = dim3(threads), k.kernelParams = args;
    cudaGraphNode_t node;
    cudaGraphAddKernelNode(&node, g, dep, dep ? 1 : 0, &k);
    return node;
}
