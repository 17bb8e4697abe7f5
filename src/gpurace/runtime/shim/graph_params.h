/* Reading and changing the parameters of graph nodes, one kind at a time (cudaGraphHostNodeSetParams, ...) or any
 * kind (cudaGraphNodeSetParams), in a graph or in an instantiated graph (cudaGraphExec...), a node's edges, and
 * kernel, memcpy and memset nodes of an instantiated graph disabled (empty nodes until enabled again); and
 * instantiation with cudaGraphInstantiateParams, whose flags an instantiated graph reports.
 * A change to a graph's node shows in graphs instantiated later; a change to an instantiated node in later
 * launches of that instantiation only, as CUDA has it. Memory allocation and free nodes take no changes
 * (cudaErrorNotSupported, as CUDA answers); the parameters of child graph and conditional nodes and the
 * external semaphore and batch memory operation kinds are refused by name. */

EXPORT cudaError_t cudaGraphMemsetNodeGetParams(struct node *node, struct cudaMemsetParams *pNodeParams) {
    if (!node || !pNodeParams || node->type != NODE_MEMSET) return record(cudaErrorInvalidValue);
    *pNodeParams = (struct cudaMemsetParams){node->dst, node->height > 1 ? node->pitch : 0, node->given_value,
                                             node->element, node->width / node->element, node->height};
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemsetNodeSetParams(struct node *node, const struct cudaMemsetParams *pNodeParams) {
    if (!node || node->type != NODE_MEMSET) return record(cudaErrorInvalidValue);
    return record(set_memset(node, pNodeParams));
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(struct node *node, void *dst, const void *src, size_t count, int kind) {
    if (!node || node->type != NODE_MEMCPY) return record(cudaErrorInvalidValue);
    if (kind < cudaMemcpyHostToHost || kind > 4) return record(cudaErrorInvalidMemcpyDirection);
    copy_1d(&node->copy, dst, src, count, kind);
    return cudaSuccess;
}

static cudaError_t set_host(struct node *node, const struct cudaHostNodeParams *p) {
    if (!p || !p->fn) return cudaErrorInvalidValue;
    node->fn = p->fn, node->data = p->userData;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphHostNodeGetParams(struct node *node, struct cudaHostNodeParams *pNodeParams) {
    if (!node || !pNodeParams || node->type != NODE_HOST) return record(cudaErrorInvalidValue);
    *pNodeParams = (struct cudaHostNodeParams){node->fn, node->data};
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphHostNodeSetParams(struct node *node, const struct cudaHostNodeParams *pNodeParams) {
    if (!node || node->type != NODE_HOST) return record(cudaErrorInvalidValue);
    return record(set_host(node, pNodeParams));
}

static cudaError_t get_event(const struct node *node, int type, void **event_out) {
    if (!node || !event_out || node->type != type) return record(cudaErrorInvalidValue);
    *event_out = node->event;
    return cudaSuccess;
}

static cudaError_t assign_event(struct node *node, void *event) {
    if (!event) return cudaErrorInvalidResourceHandle;
    node->event = event;
    return cudaSuccess;
}

static cudaError_t set_event(struct node *node, int type, void *event) {
    if (!node || node->type != type) return record(cudaErrorInvalidValue);
    return record(assign_event(node, event));
}

EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(struct node *node, void **event_out) {
    return get_event(node, NODE_EVENT_RECORD, event_out);
}

EXPORT cudaError_t cudaGraphEventRecordNodeSetEvent(struct node *node, void *event) {
    return set_event(node, NODE_EVENT_RECORD, event);
}

EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(struct node *node, void **event_out) {
    return get_event(node, NODE_WAIT_EVENT, event_out);
}

EXPORT cudaError_t cudaGraphEventWaitNodeSetEvent(struct node *node, void *event) {
    return set_event(node, NODE_WAIT_EVENT, event);
}

/* The graph a child graph node holds: its own copy of the graph it was given, which the node owns. */
EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(struct node *node, struct graph **pGraph) {
    if (!node || !pGraph || node->type != NODE_GRAPH) return record(cudaErrorInvalidValue);
    *pGraph = node->child;
    return cudaSuccess;
}

/* Up to *count of `nodes` (all when `nodes` is null, which only counts), and their number in *count; edge data
   is all zero (the default edges, the only kind graphs here have). */
static cudaError_t listed_nodes(struct node *const *found, size_t n, struct node **nodes, cudaGraphEdgeData *edgeData,
                              size_t *count) {
    if (!count) return record(cudaErrorInvalidValue);
    if (nodes) {
        for (size_t i = 0; i < *count; i++) {
            nodes[i] = i < n ? found[i] : NULL;
            if (edgeData) memset(&edgeData[i], 0, sizeof *edgeData);
        }
        if (n < *count) *count = n;
    } else {
        *count = n;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphNodeGetDependencies(struct node *node, struct node **pDependencies,
                                                cudaGraphEdgeData *edgeData, size_t *pNumDependencies) {
    if (!node) return record(cudaErrorInvalidValue);
    return listed_nodes(node->deps, node->ndeps, pDependencies, edgeData, pNumDependencies);
}

EXPORT cudaError_t cudaGraphNodeGetDependentNodes(struct node *node, struct node **pDependentNodes,
                                                  cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes) {
    if (!node) return record(cudaErrorInvalidValue);
    const struct graph *g = node->graph;
    struct node **found = malloc((g->n + 1) * sizeof *found);
    if (!found) die("%s", "out of host memory");
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++)
        for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
            if (g->nodes[i]->deps[d] == node) {
                found[n++] = g->nodes[i];
                break;
            }
    cudaError_t status = listed_nodes(found, n, pDependentNodes, edgeData, pNumDependentNodes);
    free(found);
    return status;
}

EXPORT cudaError_t cudaGraphExecHostNodeSetParams(struct graph_exec *hGraphExec, struct node *node,
                                                  const struct cudaHostNodeParams *pNodeParams) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_HOST);
    if (!e) return record(cudaErrorInvalidValue);
    return record(set_host(&e->op, pNodeParams));
}

EXPORT cudaError_t cudaGraphExecEventRecordNodeSetEvent(struct graph_exec *hGraphExec, struct node *node, void *event) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_EVENT_RECORD);
    return e ? set_event(&e->op, NODE_EVENT_RECORD, event) : record(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaGraphExecEventWaitNodeSetEvent(struct graph_exec *hGraphExec, struct node *node, void *event) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_WAIT_EVENT);
    return e ? set_event(&e->op, NODE_WAIT_EVENT, event) : record(cudaErrorInvalidValue);
}

/* The kinds whose parameters cudaGraphNodeSetParams and cudaGraphExecNodeSetParams do not change here. */
static cudaError_t refuse_params(int type, const char *call) {
    if (type == NODE_MEM_ALLOC || type == NODE_MEM_FREE) return record(cudaErrorNotSupported);
    char what[160];
    snprintf(what, sizeof what, "%s (%s node)", call, node_type_name(type));
    unsupported(what, NULL);
    return cudaErrorNotSupported;
}

/* `node` (of a graph, or the operation of an instantiated node) takes the parameters `p` of its own kind. */
static cudaError_t set_params(struct node *node, struct graph_node_params *p, const char *call) {
    switch (p->type) {
    case NODE_KERNEL: return set_kernel_params(node, &p->kernel);
    case NODE_MEMCPY: return p->memcpy.flags ? cudaErrorInvalidValue : copy_from_3d(&node->copy, &p->memcpy.copy, call);
    case NODE_MEMSET: return set_memset(node, &p->memset);
    case NODE_HOST: return set_host(node, &p->host);
    case NODE_EVENT_RECORD:
    case NODE_WAIT_EVENT: return assign_event(node, p->event.event);
    case NODE_EMPTY: return cudaSuccess;
    default: return refuse_params(p->type, call);
    }
}

EXPORT cudaError_t cudaGraphNodeSetParams(struct node *node, struct graph_node_params *nodeParams) {
    if (!node || !nodeParams || nodeParams->type != node->type) return record(cudaErrorInvalidValue);
    return record(set_params(node, nodeParams, "cudaGraphNodeSetParams"));
}

EXPORT cudaError_t cudaGraphExecNodeSetParams(struct graph_exec *graphExec, struct node *node,
                                              struct graph_node_params *nodeParams) {
    if (!node || !nodeParams || nodeParams->type != node->type) return record(cudaErrorInvalidValue);
    struct exec_node *e = exec_node_of(graphExec, node, nodeParams->type);
    if (!e) return record(nodeParams->type == NODE_EMPTY ? cudaSuccess : cudaErrorInvalidValue);
    return record(set_params(&e->op, nodeParams, "cudaGraphExecNodeSetParams"));
}

/* The instantiated node of `node` that cudaGraphNodeSetEnabled may disable: a kernel, memcpy or memset node. */
static struct exec_node *switchable(struct graph_exec *x, const struct node *node) {
    if (!node || (node->type != NODE_KERNEL && node->type != NODE_MEMCPY && node->type != NODE_MEMSET)) return NULL;
    return exec_node_of(x, node, node->type);
}

EXPORT cudaError_t cudaGraphNodeSetEnabled(struct graph_exec *hGraphExec, struct node *hNode, unsigned int isEnabled) {
    struct exec_node *e = switchable(hGraphExec, hNode);
    if (!e) return record(cudaErrorInvalidValue);
    e->disabled = !isEnabled;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphNodeGetEnabled(struct graph_exec *hGraphExec, struct node *hNode, unsigned int *isEnabled) {
    struct exec_node *e = switchable(hGraphExec, hNode);
    if (!e || !isEnabled) return record(cudaErrorInvalidValue);
    *isEnabled = !e->disabled;
    return cudaSuccess;
}

/* cudaGraphInstantiateParams: the flags in, the node at fault (none here) and the result out. */
struct instantiate_params {
    unsigned long long flags;
    void *upload_stream; /* cudaGraphInstantiateFlagUpload's stream: there is nothing to upload */
    struct node *err_node;
    int result; /* cudaGraphInstantiateResult */
};
enum { INSTANTIATE_SUCCESS = 0, INSTANTIATE_ERROR = 1, INSTANTIATE_INVALID_STRUCTURE = 2 };

EXPORT cudaError_t cudaGraphInstantiateWithParams(struct graph_exec **pGraphExec, struct graph *graph,
                                                  struct instantiate_params *instantiateParams) {
    if (!instantiateParams) return record(cudaErrorInvalidValue);
    cudaError_t status = cudaGraphInstantiateWithFlags(pGraphExec, graph, instantiateParams->flags);
    instantiateParams->err_node = NULL;
    instantiateParams->result = status == cudaSuccess      ? INSTANTIATE_SUCCESS
                                : pGraphExec && graph ? INSTANTIATE_INVALID_STRUCTURE /* a cycle */
                                                      : INSTANTIATE_ERROR;
    return status;
}

EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(struct graph_exec **pGraphExec, struct graph *graph,
                                                       struct instantiate_params *instantiateParams) {
    return cudaGraphInstantiateWithParams(pGraphExec, graph, instantiateParams);
}

EXPORT cudaError_t cudaGraphExecGetFlags(struct graph_exec *graphExec, unsigned long long *flags) {
    if (!graphExec || !flags) return record(cudaErrorInvalidValue);
    *flags = graphExec->flags;
    return cudaSuccess;
}
