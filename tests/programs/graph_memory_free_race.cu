// A kernel node reads a graph allocation, and the free node that ends the allocation does not depend on it
// (both come after the allocation node only): on a GPU the memory may be freed while the kernel still reads
// it. A data race between the kernel's load and the free node. The captured twin frees on a forked stream
// that waited for the allocation only: the same race, between the kernel and cudaFreeAsync.
// @stdout launched: cudaSuccess
// @stdout captured: cudaSuccess
// @exit 1
// @launches 4
// @expect data-race 14 37
// @expect data-race 14 55
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
    void *sum_args[] = {&x, &total};
    k.func = (void *)sum, k.kernelParams = sum_args;
    cudaGraphAddKernelNode(&sum_node, g, &fill_node, 1, &k);
    cudaGraphAddMemFreeNode(&free_node, g, &fill_node, 1, x);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    printf("launched: %s\n", cudaGetErrorName(cudaGraphLaunch(exec, 0)));
    cudaDeviceSynchronize();

    cudaStream_t s, forked;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&forked, cudaStreamNonBlocking);
    cudaEvent_t filled;
    cudaEventCreate(&filled);
    cudaGraph_t captured;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMallocAsync(&x, n * sizeof(int), s);
    fill<<<1, n, 0, s>>>(x);
    cudaEventRecord(filled, s);
    cudaStreamWaitEvent(forked, filled, 0);
    sum<<<1, n, 0, s>>>(x, total);
    cudaFreeAsync(x, forked);
    cudaEventRecord(filled, forked);
    cudaStreamWaitEvent(s, filled, 0);
    cudaStreamEndCapture(s, &captured);
    cudaGraphExec_t captured_exec;
    cudaGraphInstantiate(&captured_exec, captured, 0);
    printf("captured: %s\n", cudaGetErrorName(cudaGraphLaunch(captured_exec, s)));
    cudaStreamSynchronize(s);
    cudaFree(total);
    return 0;
}
