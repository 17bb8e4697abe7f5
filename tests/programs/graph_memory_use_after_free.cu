// A kernel node reads a graph allocation after the free node that ends it (the kernel node depends on the
// free node): the address space is unmapped when the kernel runs, so its load faults, as on a GPU: an
// out-of-bounds finding whose cause names the freed graph allocation, and the illegal address error at the
// next synchronising call. The first kernel node uses the allocation between its allocation and free nodes.
// @stdout launched: cudaSuccess
// @stdout synchronized: cudaErrorIllegalAddress
// @exit 1
// @launches 2
// @expect out-of-bounds 13
#include <cstdio>

__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }
__global__ void sum(const int *x, int *total) { atomicAdd(total, x[threadIdx.x]); }

int main() {
    const int n = 32;
    int *total;
    cudaMalloc(&total, sizeof(int));
    cudaMemset(total, 0, sizeof(int));
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemAllocNodeParams alloc = {};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
    alloc.bytesize = n * sizeof(int);
    cudaGraphNode_t alloc_node, fill_node, free_node, sum_node;
    cudaGraphAddMemAllocNode(&alloc_node, g, nullptr, 0, &alloc);
    int *x = (int *)alloc.dptr;
    cudaKernelNodeParams k = {};
    void *fill_args[] = {&x};
    k.func = (void *)fill, k.gridDim = dim3(1), k.blockDim = dim3(n), k.kernelParams = fill_args;
    cudaGraphAddKernelNode(&fill_node, g, &alloc_node, 1, &k);
    cudaGraphAddMemFreeNode(&free_node, g, &fill_node, 1, x);
    void *sum_args[] = {&x, &total};
    k.func = (void *)sum, k.kernelParams = sum_args;
    cudaGraphAddKernelNode(&sum_node, g, &free_node, 1, &k);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    printf("launched: %s\n", cudaGetErrorName(cudaGraphLaunch(exec, 0)));
    printf("synchronized: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(total);
    return 0;
}
