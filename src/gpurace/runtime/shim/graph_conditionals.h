/* Conditional graph nodes (included by cudart.c after graph_memory.h): cudaGraphConditionalHandleCreate,
 * cudaGraphAddNode (the generic node call: every node type but external semaphore and batch memory operation
 * nodes, each made as its own call makes it),
 * and their replay.
 *
 * A conditional handle is the address of 4 bytes of device memory that hold its condition (the server makes
 * them: runtime/graph_memory.py), so that kernels set it with device-side cudaGraphSetConditional, a store the
 * simulator makes there (sim/graph_conditionals.py). Each launch of the graph first assigns its handles'
 * defaults (those made with cudaGraphCondAssignDefault); without it a condition keeps its value from the last
 * launch. A conditional node owns its body graphs (one for WHILE, one or two for IF, `size` for SWITCH), which
 * are instantiated with it. Its replay reads the condition (an operation of the node's stream that reads the 4
 * bytes, so a kernel not ordered before the node that sets it races with it) once the node's dependencies have
 * run (every call runs to completion), and replays the body graph chosen on the node's stream: IF runs body 0
 * when the condition is not 0, else body 1 if there is one; SWITCH runs body n for condition n < size; WHILE
 * runs body 0 while the condition, read again after each run, is not 0. The nodes after the conditional node
 * come after whatever its bodies ran.
 */

enum { COND_IF = 0, COND_WHILE = 1, COND_SWITCH = 2 };
enum { GRAPH_MEMORY_HANDLE = 6, GRAPH_MEMORY_CONDITION = 7, GRAPH_MEMORY_ASSIGN = 8 };

struct conditional_params {
    uint64_t handle;
    int type;
    unsigned size;
    struct graph **phGraph_out;
};

/* cudaGraphNodeParams (CUDA 13): the node type, then the parameters of that type. */
struct graph_node_params {
    int type, reserved0[3];
    union {
        long long reserved1[29];
        struct cudaKernelNodeParams kernel;
        struct { int flags, reserved[3]; struct copy_3d_params copy; } memcpy;
        struct cudaMemsetParams memset;
        struct cudaHostNodeParams host;
        struct { struct graph *graph; int ownership; } child;
        struct { void *event; } event; /* event record and event wait nodes */
        struct mem_alloc_node_params alloc;
        struct { void *dptr; } free;
        struct conditional_params conditional;
    };
    long long reserved2;
};

EXPORT cudaError_t cudaGraphConditionalHandleCreate(uint64_t *pHandle_out, struct graph *graph,
                                                    unsigned int defaultLaunchValue, unsigned int flags) {
    if (!pHandle_out || !graph || flags > CONDITION_ASSIGN_DEFAULT) return record(cudaErrorInvalidValue);
    uint64_t address = 0;
    cudaError_t status = graph_memory(GRAPH_MEMORY_HANDLE, defaultLaunchValue, 0, 0, "cudaGraphConditionalHandleCreate",
                                      &address);
    if (status != cudaSuccess) return record(status);
    graph->handles = grow(graph->handles, &graph->handles_cap, graph->nhandles, sizeof *graph->handles);
    graph->handles[graph->nhandles++] = (struct conditional_handle){address, defaultLaunchValue, flags};
    *pHandle_out = address;
    return cudaSuccess;
}

/* Make `node` (new) a conditional node: its body graphs, which the program fills through `p->phGraph_out`. */
static cudaError_t set_conditional(struct node *node, struct conditional_params *p) {
    int sizes_ok = p->type == COND_WHILE ? p->size == 1 : p->type == COND_IF ? p->size == 1 || p->size == 2
                                                        : p->type == COND_SWITCH && p->size > 0;
    if (!p->handle || !sizes_ok) return cudaErrorInvalidValue;
    node->handle = p->handle, node->condition = p->type, node->nbodies = p->size;
    node->bodies = malloc(p->size * sizeof *node->bodies);
    if (!node->bodies) die("%s", "out of host memory");
    for (unsigned i = 0; i < p->size; i++) node->bodies[i] = new_graph();
    p->phGraph_out = node->bodies;
    return cudaSuccess;
}

static const char *node_type_name(int type) {
    static const char *const names[] = {"kernel", "memcpy", "memset", "host", "child graph", "empty", "event wait",
                                        "event record", "external semaphore signal", "external semaphore wait",
                                        "memory allocation", "memory free", "batch memory operation", "conditional"};
    return type >= 0 && type < (int)(sizeof names / sizeof *names) ? names[type] : "unknown";
}

static const char ADD_NODE[] = "cudaGraphAddNode";

EXPORT cudaError_t cudaGraphAddNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                    struct graph_node_params *nodeParams) {
    refuse_edge_data(dependencyData, numDependencies, ADD_NODE);
    if (!nodeParams) return record(cudaErrorInvalidValue);
    switch (nodeParams->type) {
    case NODE_MEMCPY:
        if (nodeParams->memcpy.flags) return record(cudaErrorInvalidValue);
        return add_memcpy_node(pGraphNode, graph, pDependencies, numDependencies, &nodeParams->memcpy.copy, ADD_NODE);
    case NODE_MEMSET:
        return add_memset_node(pGraphNode, graph, pDependencies, numDependencies, &nodeParams->memset, ADD_NODE);
    case NODE_HOST:
        return add_host_node(pGraphNode, graph, pDependencies, numDependencies, &nodeParams->host, ADD_NODE);
    case NODE_EVENT_RECORD:
    case NODE_WAIT_EVENT:
        return add_event_node(pGraphNode, graph, pDependencies, numDependencies, nodeParams->event.event,
                              nodeParams->type, ADD_NODE);
    case NODE_MEM_ALLOC:
        return cudaGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies, &nodeParams->alloc);
    case NODE_MEM_FREE:
        return cudaGraphAddMemFreeNode(pGraphNode, graph, pDependencies, numDependencies, nodeParams->free.dptr);
    case NODE_GRAPH:
        return cudaGraphAddChildGraphNode(pGraphNode, graph, pDependencies, numDependencies, nodeParams->child.graph);
    case NODE_KERNEL:
    case NODE_EMPTY:
    case NODE_CONDITIONAL: break;
    default: {
        char what[160];
        snprintf(what, sizeof what, "cudaGraphAddNode (%s node)", node_type_name(nodeParams->type));
        unsupported(what, NULL);
    }
    }
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, nodeParams->type,
                                  nodeParams->type == NODE_KERNEL ? "kernel launch" : ADD_NODE);
    if (status != cudaSuccess) return record(status);
    if (nodeParams->type == NODE_KERNEL) status = set_kernel_params(*pGraphNode, &nodeParams->kernel);
    if (nodeParams->type == NODE_CONDITIONAL) status = set_conditional(*pGraphNode, &nodeParams->conditional);
    if (status != cudaSuccess) drop_new_node(graph, *pGraphNode), *pGraphNode = NULL;
    return record(status);
}

/* Before a launch of `x`: its handles made with cudaGraphCondAssignDefault get their defaults. */
static cudaError_t assign_defaults(const struct graph_exec *x) {
    cudaError_t status = cudaSuccess;
    for (size_t i = 0; i < x->ndefaults && status == cudaSuccess; i++)
        status = graph_memory(GRAPH_MEMORY_ASSIGN, x->defaults[i].address, x->defaults[i].default_value, 0,
                              "cudaGraphLaunch", NULL);
    return status;
}

/* The conditional node's condition, read on its stream. */
static cudaError_t condition_of(const struct exec_node *e, uint64_t *value) {
    return graph_memory(GRAPH_MEMORY_CONDITION, e->op.handle, 0, (uintptr_t)e->stream, e->op.call, value);
}

static cudaError_t run_conditional(struct exec_node *e) {
    uint64_t value = 0;
    cudaError_t status = condition_of(e, &value);
    if (status != cudaSuccess) return status;
    if (e->op.condition == COND_WHILE) {
        while (value && status == cudaSuccess) {
            status = replay(e->bodies[0], e->stream);
            if (status == cudaSuccess) status = condition_of(e, &value);
        }
        return status;
    }
    size_t body = e->op.condition == COND_SWITCH ? value : value ? 0 : 1;
    return body < e->op.nbodies ? replay(e->bodies[body], e->stream) : cudaSuccess;
}
