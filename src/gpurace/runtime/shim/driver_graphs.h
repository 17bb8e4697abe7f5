/* CUDA graphs in the driver API: stream capture, the explicit graph API, instantiating and launching a graph.
 *
 * The runtime keeps graphs (graphs.h): a CUgraph is its cudaGraph_t, a CUgraphNode its cudaGraphNode_t and a
 * CUgraphExec its cudaGraphExec_t, and the driver's calls are the runtime's, whose parameter structs the
 * driver's share field for field (CUDA_KERNEL_NODE_PARAMS begins as cudaKernelNodeParams does,
 * CUDA_MEMSET_NODE_PARAMS and CUDA_HOST_NODE_PARAMS are cudaMemsetParams and cudaHostNodeParams), as the node
 * types, capture modes and statuses share their numbers. A copy node's CUDA_MEMCPY3D is translated to the
 * runtime's cudaMemcpy3DParms; a copy node of a CUDA array, and a kernel node of a CUkernel (cuLibrary), stop
 * the program. Driver launches, copies and memsets issued to a capturing stream become nodes as the
 * runtime's do, since they are made of the runtime's calls. Included by cuda_driver.c.
 */

typedef void *CUgraph;
typedef void *CUgraphNode;
typedef void *CUgraphExec;

/* CUDA_KERNEL_NODE_PARAMS (v2): cudaKernelNodeParams, then the CUkernel and the context. */
typedef struct {
    void *func;
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared;
    void **params, **extra;
    void *kernel, *context;
} kernel_node_params;

/* The runtime's cudaKernelNodeParams of `p`: its leading fields (a CUkernel stops the program). */
static const void *runtime_kernel_params(const kernel_node_params *p, const char *call) {
    if (p && p->kernel) {
        char what[96];
        snprintf(what, sizeof what, "%s of a CUkernel (cuLibrary's kernels are not supported)", call);
        unsupported(what);
    }
    return p;
}

/* CUDA_MEMCPY3D: per side, a position (x in bytes), a memory type and the pointer or array of that type, a
   pitch and a height; then the extent, its width in bytes. */
typedef struct {
    size_t x, y, z, lod;
    int memory_type;
    const void *host;
    CUdeviceptr device;
    void *array, *reserved;
    size_t pitch, height;
} copy_3d_side;
typedef struct {
    copy_3d_side src, dst;
    size_t width, height, depth;
} copy_3d;

enum { MEMORY_TYPE_HOST = 1, MEMORY_TYPE_DEVICE = 2, MEMORY_TYPE_ARRAY = 3, MEMORY_TYPE_UNIFIED = 4 };

/* cudaMemcpy3DParms (driver_types.h): the arrays, positions, pitched pointers, extent and kind. */
typedef struct {
    void *src_array;
    size_t src_pos[3];
    struct { void *ptr; size_t pitch, xsize, ysize; } src_ptr;
    void *dst_array;
    size_t dst_pos[3];
    struct { void *ptr; size_t pitch, xsize, ysize; } dst_ptr;
    size_t extent[3];
    int kind;
} runtime_copy_3d;

/* The runtime's form of `copy`, whose pointers the device finds by address (cudaMemcpyDefault). */
static CUresult runtime_copy(runtime_copy_3d *out, const copy_3d *copy, const char *call) {
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    const copy_3d_side *sides[2] = {&copy->src, &copy->dst};
    void *pointers[2];
    for (int i = 0; i < 2; i++) {
        const copy_3d_side *s = sides[i];
        if (s->memory_type == MEMORY_TYPE_ARRAY) {
            char what[96];
            snprintf(what, sizeof what, "%s with a CUDA array (only linear memory is supported)", call);
            unsupported(what);
        }
        if (s->memory_type != MEMORY_TYPE_HOST && s->memory_type != MEMORY_TYPE_DEVICE &&
            s->memory_type != MEMORY_TYPE_UNIFIED)
            return CUDA_ERROR_INVALID_VALUE;
        pointers[i] = s->memory_type == MEMORY_TYPE_HOST ? (void *)s->host : PTR(s->device);
    }
    *out = (runtime_copy_3d){
        .src_pos = {copy->src.x, copy->src.y, copy->src.z},
        .src_ptr = {pointers[0], copy->src.pitch, copy->width, copy->src.height},
        .dst_pos = {copy->dst.x, copy->dst.y, copy->dst.z},
        .dst_ptr = {pointers[1], copy->dst.pitch, copy->width, copy->dst.height},
        .extent = {copy->width, copy->height, copy->depth},
        .kind = MEMCPY_DEFAULT,
    };
    return CUDA_SUCCESS;
}

typedef int (*add_node_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const void *);

EXPORT CUresult cuGraphCreate(CUgraph *graph, unsigned int flags) {
    return CALL(RUNTIME("cudaGraphCreate", int (*)(CUgraph *, unsigned))(graph, flags));
}
EXPORT CUresult cuGraphDestroy(CUgraph graph) { return CALL(RUNTIME("cudaGraphDestroy", int (*)(CUgraph))(graph)); }
EXPORT CUresult cuGraphClone(CUgraph *clone, CUgraph graph) {
    return CALL(RUNTIME("cudaGraphClone", int (*)(CUgraph *, CUgraph))(clone, graph));
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                        const kernel_node_params *params) {
    const void *p = runtime_kernel_params(params, "cuGraphAddKernelNode");
    return CALL(RUNTIME("cudaGraphAddKernelNode", add_node_fn)(node, graph, deps, ndeps, p));
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                     const copy_3d *copy, CUcontext context) {
    runtime_copy_3d p;
    CUresult r = check_context(context);
    if (!r) r = runtime_copy(&p, copy, __func__);
    return r ? r : CALL(RUNTIME("cudaGraphAddMemcpyNode", add_node_fn)(node, graph, deps, ndeps, &p));
}

/* CUDA_MEMSET_NODE_PARAMS is cudaMemsetParams. */
EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                     const void *params, CUcontext context) {
    CUresult r = check_context(context);
    return r ? r : CALL(RUNTIME("cudaGraphAddMemsetNode", add_node_fn)(node, graph, deps, ndeps, params));
}

/* CUDA_HOST_NODE_PARAMS is cudaHostNodeParams. */
EXPORT CUresult cuGraphAddHostNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                   const void *params) {
    return CALL(RUNTIME("cudaGraphAddHostNode", add_node_fn)(node, graph, deps, ndeps, params));
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps) {
    typedef int (*empty_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
    return CALL(RUNTIME("cudaGraphAddEmptyNode", empty_fn)(node, graph, deps, ndeps));
}

EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                         CUgraph child) {
    return CALL(RUNTIME("cudaGraphAddChildGraphNode", add_node_fn)(node, graph, deps, ndeps, child));
}
EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                          CUevent event) {
    return CALL(RUNTIME("cudaGraphAddEventRecordNode", add_node_fn)(node, graph, deps, ndeps, event));
}
EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                        CUevent event) {
    return CALL(RUNTIME("cudaGraphAddEventWaitNode", add_node_fn)(node, graph, deps, ndeps, event));
}

typedef int (*edges_fn)(CUgraph, const CUgraphNode *, const CUgraphNode *, const void *, size_t);
EXPORT CUresult cuGraphAddDependencies_v2(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                          const void *edge_data, size_t count) {
    return CALL(RUNTIME("cudaGraphAddDependencies", edges_fn)(graph, from, to, edge_data, count));
}
EXPORT CUresult cuGraphAddDependencies(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to, size_t count) {
    return cuGraphAddDependencies_v2(graph, from, to, NULL, count);
}
EXPORT CUresult cuGraphRemoveDependencies_v2(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                             const void *edge_data, size_t count) {
    return CALL(RUNTIME("cudaGraphRemoveDependencies", edges_fn)(graph, from, to, edge_data, count));
}
EXPORT CUresult cuGraphRemoveDependencies(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                          size_t count) {
    return cuGraphRemoveDependencies_v2(graph, from, to, NULL, count);
}

typedef int (*list_fn)(CUgraph, CUgraphNode *, size_t *);
EXPORT CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *count) {
    return CALL(RUNTIME("cudaGraphGetNodes", list_fn)(graph, nodes, count));
}
EXPORT CUresult cuGraphGetRootNodes(CUgraph graph, CUgraphNode *nodes, size_t *count) {
    return CALL(RUNTIME("cudaGraphGetRootNodes", list_fn)(graph, nodes, count));
}
EXPORT CUresult cuGraphGetEdges_v2(CUgraph graph, CUgraphNode *from, CUgraphNode *to, void *edge_data, size_t *count) {
    typedef int (*get_edges_fn)(CUgraph, CUgraphNode *, CUgraphNode *, void *, size_t *);
    return CALL(RUNTIME("cudaGraphGetEdges", get_edges_fn)(graph, from, to, edge_data, count));
}
EXPORT CUresult cuGraphGetEdges(CUgraph graph, CUgraphNode *from, CUgraphNode *to, size_t *count) {
    return cuGraphGetEdges_v2(graph, from, to, NULL, count);
}
EXPORT CUresult cuGraphNodeGetType(CUgraphNode node, int *type) {
    return CALL(RUNTIME("cudaGraphNodeGetType", int (*)(CUgraphNode, int *))(node, type));
}
EXPORT CUresult cuGraphDestroyNode(CUgraphNode node) {
    return CALL(RUNTIME("cudaGraphDestroyNode", int (*)(CUgraphNode))(node));
}

EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node, kernel_node_params *params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CALL(RUNTIME("cudaGraphKernelNodeGetParams", int (*)(CUgraphNode, void *))(node, params));
    if (!r) params->kernel = NULL, params->context = &the_context;
    return r;
}
EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node, const kernel_node_params *params) {
    const void *p = runtime_kernel_params(params, "cuGraphKernelNodeSetParams");
    return CALL(RUNTIME("cudaGraphKernelNodeSetParams", int (*)(CUgraphNode, const void *))(node, p));
}
EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode node, const copy_3d *copy) {
    runtime_copy_3d p;
    CUresult r = runtime_copy(&p, copy, __func__);
    return r ? r : CALL(RUNTIME("cudaGraphMemcpyNodeSetParams", int (*)(CUgraphNode, const void *))(node, &p));
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
    typedef int (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
    return CALL(RUNTIME("cudaGraphInstantiateWithFlags", instantiate_fn)(exec, graph, flags));
}
EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
    return CALL(RUNTIME("cudaGraphExecDestroy", int (*)(CUgraphExec))(exec));
}
EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
    return CALL(RUNTIME("cudaGraphLaunch", int (*)(CUgraphExec, CUstream))(exec, stream));
}
EXPORT CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) {
    return CALL(RUNTIME("cudaGraphUpload", int (*)(CUgraphExec, CUstream))(exec, stream));
}

typedef int (*exec_set_fn)(CUgraphExec, CUgraphNode, const void *);
EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node,
                                                   const kernel_node_params *params) {
    const void *p = runtime_kernel_params(params, "cuGraphExecKernelNodeSetParams");
    return CALL(RUNTIME("cudaGraphExecKernelNodeSetParams", exec_set_fn)(exec, node, p));
}
EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec exec, CUgraphNode node, const copy_3d *copy,
                                               CUcontext context) {
    runtime_copy_3d p;
    CUresult r = check_context(context);
    if (!r) r = runtime_copy(&p, copy, __func__);
    return r ? r : CALL(RUNTIME("cudaGraphExecMemcpyNodeSetParams", exec_set_fn)(exec, node, &p));
}
EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec exec, CUgraphNode node, const void *params,
                                               CUcontext context) {
    CUresult r = check_context(context);
    return r ? r : CALL(RUNTIME("cudaGraphExecMemsetNodeSetParams", exec_set_fn)(exec, node, params));
}
/* CUgraphExecUpdateResultInfo is cudaGraphExecUpdateResultInfo. */
EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph, void *result) {
    return CALL(RUNTIME("cudaGraphExecUpdate", int (*)(CUgraphExec, CUgraph, void *))(exec, graph, result));
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
    return CALL(RUNTIME("cudaStreamBeginCapture", int (*)(CUstream, int))(stream, mode));
}
EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
    return CALL(RUNTIME("cudaStreamEndCapture", int (*)(CUstream, CUgraph *))(stream, graph));
}
EXPORT CUresult cuStreamIsCapturing(CUstream stream, int *status) {
    return CALL(RUNTIME("cudaStreamIsCapturing", int (*)(CUstream, int *))(stream, status));
}
EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream stream, int *status, unsigned long long *id, CUgraph *graph,
                                          const CUgraphNode **deps, const void **edge_data, size_t *ndeps) {
    typedef int (*info_fn)(CUstream, int *, unsigned long long *, CUgraph *, const CUgraphNode **, const void **,
                           size_t *);
    return CALL(RUNTIME("cudaStreamGetCaptureInfo", info_fn)(stream, status, id, graph, deps, edge_data, ndeps));
}
EXPORT CUresult cuThreadExchangeStreamCaptureMode(int *mode) {
    return CALL(RUNTIME("cudaThreadExchangeStreamCaptureMode", int (*)(int *))(mode));
}

/* The per-thread-default-stream forms (cuda_driver.c's PER_THREAD). */
EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream) {
    return cuGraphLaunch(exec, PER_THREAD(stream));
}
EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream) {
    return cuGraphUpload(exec, PER_THREAD(stream));
}
EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, int mode) {
    return cuStreamBeginCapture_v2(PER_THREAD(stream), mode);
}
EXPORT CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph *graph) {
    return cuStreamEndCapture(PER_THREAD(stream), graph);
}
EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream stream, int *status) {
    return cuStreamIsCapturing(PER_THREAD(stream), status);
}
EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream stream, int *status, unsigned long long *id, CUgraph *graph,
                                               const CUgraphNode **deps, const void **edge_data, size_t *ndeps) {
    return cuStreamGetCaptureInfo_v3(PER_THREAD(stream), status, id, graph, deps, edge_data, ndeps);
}
