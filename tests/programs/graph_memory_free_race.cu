// A kernel node reads a graph allocation, and the free node that ends the allocation does not depend on it
// (both come after the kernel node that fills it only): on a GPU the memory may be freed while the kernel
// still reads it. A data race between the kernel's load and the free node. The captured twin frees on a
// forked stream that waited for the fill only: the same race, between the kernel and cudaFreeAsync.
// @with parts/graph_nodes.cu
// @stdout launched: cudaSuccess
// @stdout captured: cudaSuccess
// @exit 1
// @launches 4
// @expect data-race 14 31
// @expect data-race 14 49
#include <cstdio>

__global__ void sum(const int *x, int *total) { atomicAdd(total, x[threadIdx.x]); }
__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }

cudaGraphNode_t add_allocation(cudaGraph_t g, const cudaGraphNode_t *dep, size_t bytes, void **ptr);
cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, void *func, void **args, unsigned threads);

int main() {
    const int n = 32;
    int *total, *x;
    cudaMalloc(&total, sizeof(int));
    cudaMemset(total, 0, sizeof(int));
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphNode_t alloc_node = add_allocation(g, nullptr, n * sizeof(int), (void **)&x), free_node;
    void *fill_args[] = {&x}, *sum_args[] = {&x, &total};
    cudaGraphNode_t fill_node = add_kernel(g, &alloc_node, (void *)fill, fill_args, n);
    add_kernel(g, &fill_node, (void *)sum, sum_args, n);
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
