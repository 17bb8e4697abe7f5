// The driver's memory pools, stream-ordered allocation, graph memory nodes, conditional handles and
// cuGraphAddNode, which are the runtime's: an allocation from a pool made with cuMemPoolCreate (its usage
// counted until cuMemFreeAsync), one from the device's default pool, a graph whose allocation node
// (cuGraphAddMemAllocNode) is set by a memset node and copied out by a copy node made with cuGraphAddNode
// before its free node (cuGraphAddNode as well), and IF conditional nodes whose conditions default to 1
// and 0 (cuGraphConditionalHandleCreate with CU_GRAPH_COND_ASSIGN_DEFAULT): only the first body runs. A second
// copy node, which the graph orders after the free node, reads freed memory: a use after free at its line,
// and the copy fails (cuGraphLaunch returns CUDA_ERROR_INVALID_VALUE, as a failed copy node does here).
// @nvcc_flags -lcuda
// @stdout pool: 0x05050505, used 128 then 0
// @stdout default pool: 1
// @stdout graph: 0x07070707, free node frees the allocation: 1
// @stdout conditions: 0x03030303 0x00000000
// @stdout late copy: CUDA_ERROR_INVALID_VALUE
// @exit 1
// @expect use-after-free 85
#include <cstdio>
#include <cstring>
#include <cuda.h>

static CUmemPoolProps device_pool() {
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    return props;
}

int main() {
    CUdevice device = 0;
    CUcontext context;
    CUstream stream;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&context, device) || cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
        return 1;

    CUmemoryPool pool, default_pool, current;
    CUmemPoolProps props = device_pool();
    cuMemPoolCreate(&pool, &props);
    CUdeviceptr a;
    unsigned word = 0;
    size_t used = 0, after = 1;
    cuMemAllocFromPoolAsync(&a, 128, pool, stream);
    cuMemsetD32Async(a, 0x05050505u, 32, stream);
    cuMemcpyDtoHAsync(&word, a, sizeof word, stream);
    cuStreamSynchronize(stream);
    cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
    cuMemFreeAsync(a, stream);
    cuStreamSynchronize(stream);
    cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &after);
    cuMemPoolDestroy(pool);
    printf("pool: 0x%08x, used %zu then %zu\n", word, used, after);
    cuDeviceGetDefaultMemPool(&default_pool, device);
    cuDeviceGetMemPool(&current, device);
    cuMemAllocAsync(&a, 64, stream);
    cuMemFreeAsync(a, stream);
    printf("default pool: %d\n", default_pool == current);

    CUgraph graph;
    cuGraphCreate(&graph, 0);
    CUDA_MEM_ALLOC_NODE_PARAMS alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.poolProps = device_pool();
    alloc.bytesize = 128;
    CUgraphNode alloc_node, set_node, copy_node, free_node, late_node;
    cuGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &alloc);
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset.dst = alloc.dptr, p.memset.value = 7, p.memset.elementSize = 1, p.memset.width = 128, p.memset.height = 1;
    p.memset.ctx = context;
    cuGraphAddNode(&set_node, graph, &alloc_node, nullptr, 1, &p);
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    p.memcpy.copyCtx = context;
    p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE, p.memcpy.copyParams.srcDevice = alloc.dptr;
    p.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_HOST, p.memcpy.copyParams.dstHost = &word;
    p.memcpy.copyParams.WidthInBytes = sizeof word, p.memcpy.copyParams.Height = 1, p.memcpy.copyParams.Depth = 1;
    cuGraphAddNode(&copy_node, graph, &set_node, nullptr, 1, &p);
    CUgraphNodeParams f;
    memset(&f, 0, sizeof f);
    f.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    f.free.dptr = alloc.dptr;
    cuGraphAddNode(&free_node, graph, &copy_node, nullptr, 1, &f);
    cuGraphAddNode(&late_node, graph, &free_node, nullptr, 1, &p);
    CUdeviceptr freed = 0;
    cuGraphMemFreeNodeGetParams(free_node, &freed);
    CUgraphExec exec;
    cuGraphInstantiate(&exec, graph, 0);
    CUresult late = cuGraphLaunch(exec, stream);
    cuStreamSynchronize(stream);
    printf("graph: 0x%08x, free node frees the allocation: %d\n", word, freed == alloc.dptr);

    CUdeviceptr out;
    unsigned results[2] = {9, 9};
    cuMemAlloc(&out, sizeof results);
    cuMemsetD32Async(out, 0, 2, stream);
    CUgraph conditional;
    cuGraphCreate(&conditional, 0);
    for (unsigned i = 0; i < 2; i++) {
        CUgraphConditionalHandle handle;
        cuGraphConditionalHandleCreate(&handle, conditional, context, i == 0, CU_GRAPH_COND_ASSIGN_DEFAULT);
        memset(&p, 0, sizeof p);
        p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
        p.conditional.handle = handle, p.conditional.type = CU_GRAPH_COND_TYPE_IF, p.conditional.size = 1;
        p.conditional.ctx = context;
        CUgraphNode node, body_node;
        cuGraphAddNode(&node, conditional, nullptr, nullptr, 0, &p);
        CUDA_MEMSET_NODE_PARAMS set;
        memset(&set, 0, sizeof set);
        set.dst = out + i * sizeof(unsigned), set.value = 3, set.elementSize = 1, set.width = 4, set.height = 1;
        cuGraphAddMemsetNode(&body_node, p.conditional.phGraph_out[0], nullptr, 0, &set, context);
    }
    CUgraphExec conditional_exec;
    cuGraphInstantiate(&conditional_exec, conditional, 0);
    cuGraphLaunch(conditional_exec, stream);
    cuMemcpyDtoHAsync(results, out, sizeof results, stream);
    cuStreamSynchronize(stream);
    printf("conditions: 0x%08x 0x%08x\n", results[0], results[1]);
    const char *name;
    cuGetErrorName(late, &name);
    printf("late copy: %s\n", name);
    cuMemFree(out);
    return 0;
}
