// Reading and changing graph nodes' parameters: a memset node's parameters read back as given, then changed
// with cudaGraphMemsetNodeSetParams and, for one kind at a time, with cudaGraphNodeSetParams; a host node's
// function swapped in the graph, and in the instantiated graph with cudaGraphExecHostNodeSetParams (the graph's
// node keeps its own) and cudaGraphExecNodeSetParams; an event record node's event read and changed; a node's
// dependencies and dependents listed; a memory allocation node refuses changes (cudaErrorNotSupported) and a
// node given parameters of another kind refuses them (cudaErrorInvalidValue); a disabled memset node of an
// instantiated graph writes nothing until it is enabled again; cudaGraphInstantiateWithParams reports success
// and cudaGraphExecGetFlags the flags. Edges order everything: clean.
// @stdout memset params: value 7, element 1, width 64, height 1
// @stdout launch 1: x[0] = 7, x[63] = 7, first 1, second 0
// @stdout instantiated with params: result 0, flags 1
// @stdout launch 2: x[0] = 9, x[63] = 9, first 1, second 1
// @stdout launch 3: x[0] = 5, x[63] = 5, first 2, second 1
// @stdout launch 4: x[0] = 5, x[63] = 5, first 2, second 2
// @stdout disabled (enabled 0): x[0] = 0, second 3
// @stdout enabled: x[0] = 9; a host node cannot be disabled: cudaErrorInvalidValue
// @stdout event: 1 1
// @stdout edges: memset has 0 dependencies and 1 dependent, host has 1 dependency
// @stdout alloc node: cudaErrorNotSupported; wrong kind: cudaErrorInvalidValue
// @exit 0
// @launches 0
// @expect clean
#include <cstdio>
#include <cstring>

static void first(void *count) { ++((int *)count)[0]; }
static void second(void *count) { ++((int *)count)[1]; }

int main() {
    const int n = 64;
    unsigned char *x, h[n];
    int runs[2] = {0, 0};
    cudaMalloc(&x, n);
    cudaStream_t s;
    cudaStreamCreate(&s);

    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemsetParams ms = {};
    ms.dst = x, ms.value = 7, ms.elementSize = 1, ms.width = n, ms.height = 1;
    cudaGraphNode_t memset_node, host_node, record_node;
    cudaGraphAddMemsetNode(&memset_node, g, nullptr, 0, &ms);
    cudaHostNodeParams hp = {first, runs};
    cudaGraphAddHostNode(&host_node, g, &memset_node, 1, &hp);
    cudaEvent_t e1, e2;
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaGraphAddEventRecordNode(&record_node, g, &host_node, 1, e1);

    cudaMemsetParams got;
    cudaGraphMemsetNodeGetParams(memset_node, &got);
    printf("memset params: value %u, element %u, width %zu, height %zu\n", got.value, got.elementSize, got.width, got.height);

    cudaGraphExec_t x1;
    cudaGraphInstantiate(&x1, g, 0);
    cudaGraphLaunch(x1, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, x, n, cudaMemcpyDeviceToHost);
    printf("launch 1: x[0] = %d, x[63] = %d, first %d, second %d\n", h[0], h[n - 1], runs[0], runs[1]);

    // the graph's nodes change; an instantiation made before keeps what it had, one made after takes them
    ms.value = 9;
    cudaGraphMemsetNodeSetParams(memset_node, &ms);
    cudaGraphNodeParams p = {cudaGraphNodeTypeHost};
    memset(&p, 0, sizeof p);
    p.type = cudaGraphNodeTypeHost;
    p.host.fn = second, p.host.userData = runs;
    cudaGraphNodeSetParams(host_node, &p);
    cudaGraphExec_t x2;
    cudaGraphInstantiateParams ip = {cudaGraphInstantiateFlagAutoFreeOnLaunch, s, nullptr, cudaGraphInstantiateError};
    cudaGraphInstantiateWithParams(&x2, g, &ip);
    unsigned long long flags = 0;
    cudaGraphExecGetFlags(x2, &flags);
    printf("instantiated with params: result %d, flags %llu\n", (int)ip.result_out, flags);
    cudaGraphLaunch(x2, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, x, n, cudaMemcpyDeviceToHost);
    printf("launch 2: x[0] = %d, x[63] = %d, first %d, second %d\n", h[0], h[n - 1], runs[0], runs[1]);

    // the first instantiation, changed in place: its memset through the generic call, its host node by kind
    memset(&p, 0, sizeof p);
    p.type = cudaGraphNodeTypeMemset;
    p.memset.dst = x, p.memset.value = 5, p.memset.elementSize = 1, p.memset.width = n, p.memset.height = 1;
    cudaGraphExecNodeSetParams(x1, memset_node, &p);
    cudaGraphLaunch(x1, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, x, n, cudaMemcpyDeviceToHost);
    printf("launch 3: x[0] = %d, x[63] = %d, first %d, second %d\n", h[0], h[n - 1], runs[0], runs[1]);
    cudaHostNodeParams hp2 = {second, runs};
    cudaGraphExecHostNodeSetParams(x1, host_node, &hp2);
    cudaGraphLaunch(x1, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, x, n, cudaMemcpyDeviceToHost);
    printf("launch 4: x[0] = %d, x[63] = %d, first %d, second %d\n", h[0], h[n - 1], runs[0], runs[1]);

    // a disabled node is an empty one until it is enabled again
    cudaMemset(x, 0, n);
    cudaGraphNodeSetEnabled(x2, memset_node, 0);
    unsigned enabled = 1;
    cudaGraphNodeGetEnabled(x2, memset_node, &enabled);
    cudaGraphLaunch(x2, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, x, n, cudaMemcpyDeviceToHost);
    printf("disabled (enabled %u): x[0] = %d, second %d\n", enabled, h[0], runs[1]);
    cudaGraphNodeSetEnabled(x2, memset_node, 1);
    cudaError_t host_node_switch = cudaGraphNodeSetEnabled(x2, host_node, 0);
    cudaGraphLaunch(x2, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(h, x, n, cudaMemcpyDeviceToHost);
    printf("enabled: x[0] = %d; a host node cannot be disabled: %s\n", h[0], cudaGetErrorName(host_node_switch));
    cudaGetLastError();

    cudaEvent_t before, after;
    cudaGraphEventRecordNodeGetEvent(record_node, &before);
    cudaGraphEventRecordNodeSetEvent(record_node, e2);
    cudaGraphEventRecordNodeGetEvent(record_node, &after);
    printf("event: %d %d\n", before == e1, after == e2);

    size_t deps = 99, dependents = 99, host_deps = 0;
    cudaGraphNodeGetDependencies(memset_node, nullptr, nullptr, &deps);
    cudaGraphNodeGetDependentNodes(memset_node, nullptr, nullptr, &dependents);
    cudaGraphNode_t listed[2] = {nullptr, nullptr};
    host_deps = 2;
    cudaGraphNodeGetDependencies(host_node, listed, nullptr, &host_deps);
    printf("edges: memset has %zu dependencies and %zu dependent, host has %zu dependency%s\n", deps, dependents,
           host_deps, listed[0] == memset_node ? "" : " (not the memset node)");

    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.bytesize = 256;
    cudaGraph_t g2;
    cudaGraphCreate(&g2, 0);
    cudaGraphNode_t alloc_node;
    cudaGraphAddMemAllocNode(&alloc_node, g2, nullptr, 0, &ap);
    memset(&p, 0, sizeof p);
    p.type = cudaGraphNodeTypeMemAlloc;
    p.alloc.poolProps = ap.poolProps, p.alloc.bytesize = ap.bytesize;
    cudaError_t refused = cudaGraphNodeSetParams(alloc_node, &p);
    p.type = cudaGraphNodeTypeHost;
    p.host.fn = first, p.host.userData = runs;
    cudaError_t wrong = cudaGraphNodeSetParams(memset_node, &p);
    printf("alloc node: %s; wrong kind: %s\n", cudaGetErrorName(refused), cudaGetErrorName(wrong));
    cudaGetLastError();

    cudaGraphExecDestroy(x1);
    cudaGraphExecDestroy(x2);
    cudaGraphDestroy(g2);
    cudaGraphDestroy(g);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaStreamDestroy(s);
    cudaFree(x);
    return 0;
}
