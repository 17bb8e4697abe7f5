// Graph memory nodes: an explicit graph allocates a buffer, fills it, doubles it in a kernel, copies it back
// and frees it; a second allocation after the free takes the first one's address. A graph whose allocation is
// not freed cannot be launched again until it is (cudaErrorInvalidValue), unless it was instantiated with
// cudaGraphInstantiateFlagAutoFreeOnLaunch; cudaFree outside the graph frees it. A stream capture turns
// cudaMallocAsync and cudaFreeAsync into allocation and free nodes. The usage attributes count the memory
// associated with graphs: the two buffers the first graph holds at once, which later launches and graphs on
// the same stream use again, until cudaDeviceGraphMemTrim keeps only what live allocations hold.
// @with parts/graph_nodes.cu
// @stdout same address: 1
// @stdout params: 128 bytes, node type 10, free node type 11, frees the allocation: 1
// @stdout explicit: 0 2 4 62
// @stdout relaunched: 0 2 4 62
// @stdout kept: used 256 high 256
// @stdout relaunch while allocated: cudaErrorInvalidValue
// @stdout after cudaFree: cudaSuccess
// @stdout auto free: cudaSuccess
// @stdout captured: 1 3 5 63
// @stdout captured again: 1 3 5 63
// @stdout two streams: used 384
// @stdout one stream: used 384
// @stdout trimmed: used 128 reserved 128
// @exit 0
// @launches 8
// @expect clean
#include <cstdio>

__global__ void twice(const int *in, int *out) { out[threadIdx.x] = 2 * in[threadIdx.x]; }
__global__ void plus_one(int *x) { x[threadIdx.x] += 1; }

const int n = 32;

static size_t attribute(cudaGraphMemAttributeType which) {
    size_t value = 0;
    cudaDeviceGetGraphMemAttribute(0, which, &value);
    return value;
}

cudaGraphNode_t add_allocation(cudaGraph_t g, const cudaGraphNode_t *dep, size_t bytes, void **ptr);
cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, void *func, void **args, unsigned threads);

// alloc a -> copy in -> alloc b -> kernel -> copy out -> free a, free b (unless b is kept: `b_out`)
static cudaGraphExec_t doubling_graph(int *host_in, int *host_out, int **b_out, bool free_b, unsigned flags) {
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    int *a, *b;
    cudaGraphNode_t copy_in, copy_out, free_a, free_b_node;
    cudaGraphNode_t alloc_a = add_allocation(g, nullptr, n * sizeof(int), (void **)&a);
    cudaGraphAddMemcpyNode1D(&copy_in, g, &alloc_a, 1, a, host_in, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaGraphNode_t alloc_b = add_allocation(g, &copy_in, n * sizeof(int), (void **)&b);
    void *args[] = {&a, &b};
    cudaGraphNode_t kernel = add_kernel(g, &alloc_b, (void *)twice, args, n);
    cudaGraphAddMemcpyNode1D(&copy_out, g, &kernel, 1, host_out, b, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaGraphAddMemFreeNode(&free_a, g, &kernel, 1, a);
    if (free_b) cudaGraphAddMemFreeNode(&free_b_node, g, &copy_out, 1, b);
    if (b_out == nullptr) {  // the first graph: a third allocation after both frees reuses an address
        cudaGraphNode_t deps[] = {free_a, free_b_node}, alloc_c, free_c;
        cudaMemAllocNodeParams alloc;
        cudaGraphMemAllocNodeGetParams(alloc_a, &alloc);
        cudaGraphAddMemAllocNode(&alloc_c, g, deps, 2, &alloc);
        printf("same address: %d\n", alloc.dptr == a || alloc.dptr == b);
        cudaGraphAddMemFreeNode(&free_c, g, &alloc_c, 1, alloc.dptr);
        cudaMemAllocNodeParams got;
        cudaGraphMemAllocNodeGetParams(alloc_c, &got);
        cudaGraphNodeType alloc_type, free_type;
        cudaGraphNodeGetType(alloc_c, &alloc_type);
        cudaGraphNodeGetType(free_c, &free_type);
        void *freed = nullptr;
        cudaGraphMemFreeNodeGetParams(free_c, &freed);
        printf("params: %zu bytes, node type %d, free node type %d, frees the allocation: %d\n", got.bytesize,
               (int)alloc_type, (int)free_type, freed == got.dptr);
    } else {
        *b_out = b;
    }
    cudaGraphExec_t exec;
    cudaGraphInstantiateWithFlags(&exec, g, flags);
    cudaGraphDestroy(g);
    return exec;
}

static void show(const char *what, const int *x) { printf("%s: %d %d %d %d\n", what, x[0], x[1], x[2], x[n - 1]); }

int main() {
    int in[n], out[n];
    for (int i = 0; i < n; i++) in[i] = i;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

    cudaGraphExec_t exec = doubling_graph(in, out, nullptr, true, 0);
    cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
    show("explicit", out);
    for (int i = 0; i < n; i++) out[i] = -1;
    cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
    show("relaunched", out);

    int *kept;
    cudaGraphExec_t keeps = doubling_graph(in, out, &kept, false, 0);
    cudaGraphLaunch(keeps, s);
    cudaStreamSynchronize(s);
    printf("kept: used %zu high %zu\n", attribute(cudaGraphMemAttrUsedMemCurrent), attribute(cudaGraphMemAttrUsedMemHigh));
    printf("relaunch while allocated: %s\n", cudaGetErrorName(cudaGraphLaunch(keeps, s)));
    cudaFree(kept);
    printf("after cudaFree: %s\n", cudaGetErrorName(cudaGraphLaunch(keeps, s)));
    cudaStreamSynchronize(s);
    cudaFree(kept);

    int *auto_kept;
    cudaGraphExec_t auto_free = doubling_graph(in, out, &auto_kept, false, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    cudaGraphLaunch(auto_free, s);
    printf("auto free: %s\n", cudaGetErrorName(cudaGraphLaunch(auto_free, s)));
    cudaStreamSynchronize(s);

    cudaStream_t capturing;
    cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking);
    cudaGraph_t captured;
    cudaStreamBeginCapture(capturing, cudaStreamCaptureModeGlobal);
    int *x;
    cudaMallocAsync(&x, n * sizeof(int), capturing);
    cudaMemcpyAsync(x, out, n * sizeof(int), cudaMemcpyHostToDevice, capturing);
    plus_one<<<1, n, 0, capturing>>>(x);
    cudaMemcpyAsync(in, x, n * sizeof(int), cudaMemcpyDeviceToHost, capturing);
    cudaFreeAsync(x, capturing);
    cudaStreamEndCapture(capturing, &captured);
    cudaGraphExec_t captured_exec;
    cudaGraphInstantiate(&captured_exec, captured, 0);
    cudaGraphLaunch(captured_exec, s);
    cudaStreamSynchronize(s);
    show("captured", in);
    cudaGraphLaunch(captured_exec, s);
    cudaStreamSynchronize(s);
    show("captured again", in);

    // Launched on two streams at once, two graphs cannot share memory; one after the other on a stream they can.
    cudaGraphExec_t scratch[2];
    for (int i = 0; i < 2; i++) {
        cudaGraph_t scratch_graph;
        cudaStreamBeginCapture(capturing, cudaStreamCaptureModeGlobal);
        cudaMallocAsync(&x, n * sizeof(int), capturing);
        cudaMemsetAsync(x, 0, n * sizeof(int), capturing);
        cudaFreeAsync(x, capturing);
        cudaStreamEndCapture(capturing, &scratch_graph);
        cudaGraphInstantiate(&scratch[i], scratch_graph, 0);
    }
    cudaDeviceGraphMemTrim(0);
    cudaGraphLaunch(scratch[0], s);
    cudaGraphLaunch(scratch[1], capturing);
    printf("two streams: used %zu\n", attribute(cudaGraphMemAttrUsedMemCurrent));
    cudaDeviceSynchronize();
    cudaGraphLaunch(scratch[0], s);
    cudaGraphLaunch(scratch[1], s);
    printf("one stream: used %zu\n", attribute(cudaGraphMemAttrUsedMemCurrent));
    cudaDeviceSynchronize();

    cudaDeviceGraphMemTrim(0);
    printf("trimmed: used %zu reserved %zu\n", attribute(cudaGraphMemAttrUsedMemCurrent),
           attribute(cudaGraphMemAttrReservedMemCurrent));
    cudaFree(auto_kept);
    return 0;
}
