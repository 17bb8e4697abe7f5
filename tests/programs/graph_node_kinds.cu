// Every kind of node the explicit API and capture make, in graphs whose edges order everything: a memset,
// an empty node, a child graph of two kernels, a host node and a copy back; the graph's structure as the
// program sees it (node types, edges added, removed and with a destroyed node); a clone launched twice with
// instantiated parameters changed in between; an event record node in one graph waited for by an event
// wait node of another graph launched on another stream, and the same with captured graphs (external event
// record and wait); and a capture of 2D memsets and copies and a host function. The results check
// themselves: clean.
// @stdout types: memset 2, empty 5, graph 4, host 3, memcpy 1
// @stdout edges 4, with one more 5, removed 4, nodes after destroying 5
// @stdout launch 1: x[0] = 2, host nodes run 1
// @stdout launch 2: x[5] = 16843011, host nodes run 2
// @stdout event nodes: y[3] = 2
// @stdout captured event nodes: y[3] = 4
// @stdout captured 2D: 0 1 2 0 | 0 0 0 0, host functions run 3
// @exit 0
// @launches 8
// @expect clean
#include <cstdio>

__global__ void inc(int *x) { x[threadIdx.x] += 1; }

static void count_run(void *count) { ++*(int *)count; }

int main() {
    const int n = 32;
    int *x, *y, host[n], other[n], runs = 0;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&y, n * sizeof(int));
    cudaMemset(y, 0, n * sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);

    cudaGraph_t child, graph;
    cudaGraphCreate(&child, 0);
    cudaGraphCreate(&graph, 0);
    void *args[] = {&x};
    cudaKernelNodeParams p = {};
    p.func = (void *)inc, p.gridDim = dim3(1), p.blockDim = dim3(n), p.kernelParams = args;
    cudaGraphNode_t first, second;
    cudaGraphAddKernelNode(&first, child, nullptr, 0, &p);
    cudaGraphAddKernelNode(&second, child, &first, 1, &p);

    cudaMemsetParams clear = {};
    clear.dst = x, clear.elementSize = 4, clear.width = n, clear.height = 1;
    cudaHostNodeParams note = {count_run, &runs};
    cudaGraphNode_t m, e, ch, h, back;
    cudaGraphAddMemsetNode(&m, graph, nullptr, 0, &clear);
    cudaGraphAddEmptyNode(&e, graph, &m, 1);
    cudaGraphAddChildGraphNode(&ch, graph, &e, 1, child);
    cudaGraphAddHostNode(&h, graph, &ch, 1, &note);
    cudaGraphAddMemcpyNode1D(&back, graph, &h, 1, host, x, sizeof host, cudaMemcpyDeviceToHost);
    cudaGraphNodeType t[5];
    cudaGraphNode_t all[] = {m, e, ch, h, back};
    for (int i = 0; i < 5; i++) cudaGraphNodeGetType(all[i], &t[i]);
    printf("types: memset %d, empty %d, graph %d, host %d, memcpy %d\n", t[0], t[1], t[2], t[3], t[4]);

    size_t edges = 0, more = 0, fewer = 0, nodes = 0;
    cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges);
    cudaGraphNode_t extra;
    cudaGraphAddKernelNode(&extra, graph, nullptr, 0, &p);
    cudaGraphAddDependencies(graph, &back, &extra, nullptr, 1);
    cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &more);
    cudaGraphRemoveDependencies(graph, &back, &extra, nullptr, 1);
    cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &fewer);
    cudaGraphDestroyNode(extra);
    cudaGraphGetNodes(graph, nullptr, &nodes);
    printf("edges %zu, with one more %zu, removed %zu, nodes after destroying %zu\n", edges, more, fewer, nodes);

    cudaGraph_t copy;
    cudaGraphClone(&copy, graph);
    cudaGraphDestroy(graph);
    cudaGraphNode_t copy_nodes[5];
    nodes = 5;
    cudaGraphGetNodes(copy, copy_nodes, &nodes);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, copy, 0);
    cudaGraphUpload(exec, s1);
    cudaGraphLaunch(exec, s1);
    cudaStreamSynchronize(s1);
    printf("launch 1: x[0] = %d, host nodes run %d\n", host[0], runs);
    clear.elementSize = 1, clear.value = 1, clear.width = n * sizeof(int);
    cudaGraphExecMemsetNodeSetParams(exec, copy_nodes[0], &clear);
    cudaGraphExecMemcpyNodeSetParams1D(exec, copy_nodes[4], other, x, sizeof other, cudaMemcpyDeviceToHost);
    cudaGraphLaunch(exec, s1);
    cudaStreamSynchronize(s1);
    printf("launch 2: x[5] = %d, host nodes run %d\n", other[5], runs);

    cudaEvent_t done;
    cudaEventCreate(&done);
    cudaGraph_t producer, consumer;
    cudaGraphCreate(&producer, 0);
    cudaGraphCreate(&consumer, 0);
    args[0] = &y;
    cudaGraphNode_t k1, rec, wait, k2;
    cudaGraphAddKernelNode(&k1, producer, nullptr, 0, &p);
    cudaGraphAddEventRecordNode(&rec, producer, &k1, 1, done);
    cudaGraphAddEventWaitNode(&wait, consumer, nullptr, 0, done);
    cudaGraphAddKernelNode(&k2, consumer, &wait, 1, &p);
    cudaGraphExec_t produce, consume;
    cudaGraphInstantiate(&produce, producer, 0);
    cudaGraphInstantiate(&consume, consumer, 0);
    cudaGraphLaunch(produce, s1);
    cudaGraphLaunch(consume, s2);
    cudaDeviceSynchronize();
    int y3;
    cudaMemcpy(&y3, y + 3, sizeof y3, cudaMemcpyDeviceToHost);
    printf("event nodes: y[3] = %d\n", y3);

    cudaGraph_t records, waits;
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    inc<<<1, n, 0, s1>>>(y);
    cudaEventRecordWithFlags(done, s1, cudaEventRecordExternal);
    cudaStreamEndCapture(s1, &records);
    cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
    cudaStreamWaitEvent(s2, done, cudaEventWaitExternal);
    inc<<<1, n, 0, s2>>>(y);
    cudaStreamEndCapture(s2, &waits);
    cudaGraphExec_t record_exec, wait_exec;
    cudaGraphInstantiate(&record_exec, records, 0);
    cudaGraphInstantiate(&wait_exec, waits, 0);
    cudaGraphLaunch(record_exec, s1);
    cudaGraphLaunch(wait_exec, s2);
    cudaDeviceSynchronize();
    cudaMemcpy(&y3, y + 3, sizeof y3, cudaMemcpyDeviceToHost);
    printf("captured event nodes: y[3] = %d\n", y3);

    int *grid;
    size_t pitch;
    cudaMallocPitch((void **)&grid, &pitch, 4 * sizeof(int), 2);
    int rows[2][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}}, seen[2][4];
    cudaGraph_t captured;
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaMemset2DAsync(grid, pitch, 0, 4 * sizeof(int), 2, s1);
    cudaMemcpy2DAsync(grid, pitch, rows, sizeof rows[0], 3 * sizeof(int), 1, cudaMemcpyHostToDevice, s1);
    cudaMemcpy2DAsync(seen, sizeof seen[0], grid, pitch, 4 * sizeof(int), 2, cudaMemcpyDeviceToHost, s1);
    cudaLaunchHostFunc(s1, count_run, &runs);
    cudaStreamEndCapture(s1, &captured);
    cudaGraphExec_t two_d;
    cudaGraphInstantiate(&two_d, captured, 0);
    cudaGraphLaunch(two_d, s1);
    cudaStreamSynchronize(s1);
    printf("captured 2D: %d %d %d %d | %d %d %d %d, host functions run %d\n", seen[0][0], seen[0][1], seen[0][2],
           seen[0][3], seen[1][0], seen[1][1], seen[1][2], seen[1][3], runs);
    return 0;
}
