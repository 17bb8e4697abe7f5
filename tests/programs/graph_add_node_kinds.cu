// cudaGraphAddNode makes every node kind that has a call of its own: a memset node clears x, a kernel node
// adds one to each element, a memcpy node copies x to the host, a host node counts its runs and an event
// record node records an event that an event wait node of a second graph, launched on another stream, waits
// for before its memset node writes y. The edges order everything, so the run is clean, and the results are
// those of the node calls. A copy node with nonzero flags is cudaErrorInvalidValue.
// @stdout types: memset 2, kernel 0, memcpy 1, host 3, event record 7, event wait 6
// @stdout launch 1: h[0] = 1, h[31] = 1, host nodes run 1
// @stdout launch 2: h[0] = 1, host nodes run 2
// @stdout y[5] = 16843009
// @stdout copy flags: cudaErrorInvalidValue
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>
#include <cstring>

__global__ void inc(int *x) { x[threadIdx.x] += 1; }

static void count_run(void *count) { ++*(int *)count; }

// One node made with cudaGraphAddNode, after `dep` (when not null).
static cudaGraphNode_t add(cudaGraph_t g, cudaGraphNode_t dep, cudaGraphNodeParams *p) {
    cudaGraphNode_t node;
    cudaGraphAddNode(&node, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, p);
    return node;
}

int main() {
    const int n = 32;
    int *x, *y, h[n], runs = 0;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&y, n * sizeof(int));
    cudaEvent_t done;
    cudaStream_t s1, s2;
    cudaGraph_t g, waiting;
    cudaEventCreate(&done);
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaGraphCreate(&g, 0);
    cudaGraphCreate(&waiting, 0);
    cudaGraphNodeParams p = {cudaGraphNodeTypeMemset};
    p.memset.dst = x, p.memset.value = 0, p.memset.elementSize = 4, p.memset.width = n, p.memset.height = 1;
    cudaGraphNode_t nodes[6];
    nodes[0] = add(g, nullptr, &p);
    void *args[] = {&x};
    p = {cudaGraphNodeTypeKernel};
    p.kernel.func = (void *)inc, p.kernel.gridDim = dim3(1), p.kernel.blockDim = dim3(n), p.kernel.kernelParams = args;
    nodes[1] = add(g, nodes[0], &p);
    p = {cudaGraphNodeTypeMemcpy};
    p.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(x, n * sizeof(int), n * sizeof(int), 1);
    p.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(h, n * sizeof(int), n * sizeof(int), 1);
    p.memcpy.copyParams.extent = make_cudaExtent(n * sizeof(int), 1, 1);
    p.memcpy.copyParams.kind = cudaMemcpyDeviceToHost;
    nodes[2] = add(g, nodes[1], &p);
    p.memcpy.flags = 1;
    cudaGraphNode_t refused;
    cudaError_t flags_error = cudaGraphAddNode(&refused, g, nullptr, nullptr, 0, &p);
    p = {cudaGraphNodeTypeHost};
    p.host.fn = count_run, p.host.userData = &runs;
    nodes[3] = add(g, nodes[2], &p);
    p = {cudaGraphNodeTypeEventRecord};
    p.eventRecord.event = done;
    nodes[4] = add(g, nodes[3], &p);
    p = {cudaGraphNodeTypeWaitEvent};
    p.eventWait.event = done;
    nodes[5] = add(waiting, nullptr, &p);
    p = {cudaGraphNodeTypeMemset};
    p.memset.dst = y, p.memset.value = 1, p.memset.elementSize = 1, p.memset.width = n * sizeof(int), p.memset.height = 1;
    add(waiting, nodes[5], &p);

    cudaGraphNodeType types[6];
    for (int i = 0; i < 6; i++) cudaGraphNodeGetType(nodes[i], &types[i]);
    printf("types: memset %d, kernel %d, memcpy %d, host %d, event record %d, event wait %d\n", types[0], types[1],
           types[2], types[3], types[4], types[5]);

    cudaGraphExec_t exec, waiting_exec;
    cudaGraphInstantiate(&exec, g, 0);
    cudaGraphInstantiate(&waiting_exec, waiting, 0);
    cudaGraphLaunch(exec, s1);
    cudaStreamSynchronize(s1);
    printf("launch 1: h[0] = %d, h[31] = %d, host nodes run %d\n", h[0], h[31], runs);
    cudaGraphLaunch(exec, s1);
    cudaGraphLaunch(waiting_exec, s2);
    cudaDeviceSynchronize();
    printf("launch 2: h[0] = %d, host nodes run %d\n", h[0], runs);
    int y5;
    cudaMemcpy(&y5, y + 5, sizeof y5, cudaMemcpyDeviceToHost);
    printf("y[5] = %d\n", y5);
    printf("copy flags: %s\n", cudaGetErrorName(flags_error));
    return 0;
}
