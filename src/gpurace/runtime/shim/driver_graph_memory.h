/* The driver's stream-ordered allocator and memory pools, graph memory nodes, conditional handles and the generic
 * cuGraphAddNode: the runtime's calls (stream_ordered.h, graph_memory.h, graph_conditionals.h), with the same
 * ordering, errors and limits. The driver's structs are the runtime's field for field (CUmemPoolProps is
 * cudaMemPoolProps, CUmemAccessDesc cudaMemAccessDesc, CUmemLocation cudaMemLocation, CUDA_MEM_ALLOC_NODE_PARAMS
 * cudaMemAllocNodeParams) and their attributes, node and condition types share their numbers. CUgraphNodeParams
 * is cudaGraphNodeParams, but for its kernel parameters (a CUfunction, refused with a CUkernel, as
 * cuGraphAddKernelNode refuses it), its copy parameters (a CUDA_MEMCPY3D after a context, translated as
 * cuGraphAddMemcpyNode translates it) and the contexts that trail some of its structs (checked).
 * Included by cuda_driver.c after driver_graphs.h.
 */

typedef void *CUmemoryPool;

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream) {
    return CALL(RUNTIME("cudaMallocAsync", int (*)(CUdeviceptr *, size_t, CUstream))(dptr, bytes, stream));
}
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
    typedef int (*from_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    return CALL(RUNTIME("cudaMallocFromPoolAsync", from_pool_fn)(dptr, bytes, pool, stream));
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
    return CALL(RUNTIME("cudaFreeAsync", int (*)(void *, CUstream))(PTR(dptr), stream));
}
EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream) {
    return cuMemAllocAsync(dptr, bytes, PER_THREAD(stream));
}
EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
    return cuMemAllocFromPoolAsync(dptr, bytes, pool, PER_THREAD(stream));
}
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) { return cuMemFreeAsync(dptr, PER_THREAD(stream)); }

EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const void *props) {
    return CALL(RUNTIME("cudaMemPoolCreate", int (*)(CUmemoryPool *, const void *))(pool, props));
}
EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
    return CALL(RUNTIME("cudaMemPoolDestroy", int (*)(CUmemoryPool))(pool));
}
EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attribute, void *value) {
    return CALL(RUNTIME("cudaMemPoolSetAttribute", int (*)(CUmemoryPool, int, void *))(pool, attribute, value));
}
EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attribute, void *value) {
    return CALL(RUNTIME("cudaMemPoolGetAttribute", int (*)(CUmemoryPool, int, void *))(pool, attribute, value));
}
EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const void *map, size_t count) {
    return CALL(RUNTIME("cudaMemPoolSetAccess", int (*)(CUmemoryPool, const void *, size_t))(pool, map, count));
}
EXPORT CUresult cuMemPoolGetAccess(int *flags, CUmemoryPool pool, void *location) {
    return CALL(RUNTIME("cudaMemPoolGetAccess", int (*)(int *, CUmemoryPool, void *))(flags, pool, location));
}
EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
    return CALL(RUNTIME("cudaMemPoolTrimTo", int (*)(CUmemoryPool, size_t))(pool, keep));
}
EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice device) {
    return CALL(RUNTIME("cudaDeviceGetDefaultMemPool", int (*)(CUmemoryPool *, int))(pool, device));
}
EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice device) {
    return CALL(RUNTIME("cudaDeviceGetMemPool", int (*)(CUmemoryPool *, int))(pool, device));
}
EXPORT CUresult cuDeviceSetMemPool(CUdevice device, CUmemoryPool pool) {
    return CALL(RUNTIME("cudaDeviceSetMemPool", int (*)(int, CUmemoryPool))(device, pool));
}

EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                       void *params) {
    return CALL(RUNTIME("cudaGraphAddMemAllocNode", add_node_fn)(node, graph, deps, ndeps, params));
}
EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                      CUdeviceptr dptr) {
    return CALL(RUNTIME("cudaGraphAddMemFreeNode", add_node_fn)(node, graph, deps, ndeps, PTR(dptr)));
}
EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode node, void *params) {
    return CALL(RUNTIME("cudaGraphMemAllocNodeGetParams", int (*)(CUgraphNode, void *))(node, params));
}
EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode node, CUdeviceptr *dptr) {
    return CALL(RUNTIME("cudaGraphMemFreeNodeGetParams", int (*)(CUgraphNode, void *))(node, dptr));
}
EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice device, int attribute, void *value) {
    return CALL(RUNTIME("cudaDeviceGetGraphMemAttribute", int (*)(int, int, void *))(device, attribute, value));
}
EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice device, int attribute, void *value) {
    return CALL(RUNTIME("cudaDeviceSetGraphMemAttribute", int (*)(int, int, void *))(device, attribute, value));
}
EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device) {
    return CALL(RUNTIME("cudaDeviceGraphMemTrim", int (*)(int))(device));
}

EXPORT CUresult cuGraphConditionalHandleCreate(unsigned long long *handle, CUgraph graph, CUcontext context,
                                               unsigned int default_value, unsigned int flags) {
    typedef int (*handle_fn)(unsigned long long *, CUgraph, unsigned, unsigned);
    CUresult r = check_context(context);
    return r ? r : CALL(RUNTIME("cudaGraphConditionalHandleCreate", handle_fn)(handle, graph, default_value, flags));
}

enum { GRAPH_NODE_KERNEL = 0, GRAPH_NODE_MEMCPY = 1, GRAPH_NODE_MEMSET = 2, GRAPH_NODE_CONDITIONAL = 13 };

/* CUgraphNodeParams and cudaGraphNodeParams: a type, then the parameters of that type, in 29 words. */
typedef struct {
    int type, reserved0[3];
    union {
        long long reserved1[29];
        kernel_node_params kernel;
        struct { int flags, reserved; CUcontext context; copy_3d copy; } memcpy;
        struct { CUdeviceptr dst; size_t pitch; unsigned value, element_size; size_t width, height; CUcontext context; } memset;
        struct { unsigned long long handle; int type; unsigned size; CUgraph *bodies; CUcontext context; } conditional;
    };
    long long reserved2;
} driver_node_params;
typedef struct {
    int type, reserved0[3];
    union {
        long long reserved1[29];
        struct { int flags, reserved[3]; runtime_copy_3d copy; } memcpy;
    };
    long long reserved2;
} runtime_node_params;

/* The runtime's parameters for the driver's `p` (`out` holds them when they differ), or NULL after an error `r`. */
static const void *runtime_node(runtime_node_params *out, const driver_node_params *p, CUresult *r, const char *call) {
    *r = CUDA_SUCCESS;
    switch (p->type) {
    case GRAPH_NODE_KERNEL: runtime_kernel_params(&p->kernel, call); break;
    case GRAPH_NODE_MEMSET: *r = check_context(p->memset.context); break;
    case GRAPH_NODE_CONDITIONAL: *r = check_context(p->conditional.context); break;
    case GRAPH_NODE_MEMCPY:
        if (p->memcpy.flags || p->memcpy.reserved) *r = CUDA_ERROR_INVALID_VALUE;
        if (!*r) *r = check_context(p->memcpy.context);
        *out = (runtime_node_params){.type = p->type};
        if (!*r) *r = runtime_copy(&out->memcpy.copy, &p->memcpy.copy, call);
        return *r ? NULL : out;
    }
    return *r ? NULL : p;
}

EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, const void *edge_data,
                                  size_t ndeps, driver_node_params *params) {
    typedef int (*add_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, const void *, size_t, const void *);
    runtime_node_params translated;
    CUresult r = params ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    const void *p = params ? runtime_node(&translated, params, &r, "cuGraphAddNode") : NULL;
    /* A conditional node's bodies are written to `params` itself, which the runtime is given as it is. */
    return r ? r : CALL(RUNTIME("cudaGraphAddNode", add_fn)(node, graph, deps, edge_data, ndeps, p));
}
EXPORT CUresult cuGraphAddNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                               driver_node_params *params) {
    return cuGraphAddNode_v2(node, graph, deps, NULL, ndeps, params);
}
