/* Graph memory nodes (included by cudart.c after graphs.h): cudaGraphAddMemAllocNode, cudaGraphAddMemFreeNode,
 * cudaMallocAsync and cudaFreeAsync during a stream capture, the relaunch rule and the usage attributes.
 *
 * A graph allocation's address is fixed when its node is made, for the graph's life (the server reserves it:
 * runtime/graph_memory.py). Each launch allocates the memory there when the allocation node runs, on the node's
 * stream, and a free node frees it as cudaFreeAsync does; so do cudaFree, cudaFreeAsync and free nodes of other
 * graphs. A graph whose allocation from its last launch is still live cannot be launched again
 * (cudaErrorInvalidValue) unless it was instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch, which frees
 * it first, on the launch stream.
 *
 * As on a GPU, an allocation node takes the address of an earlier allocation of the same graph when every
 * allocation made at that address in the graph was freed by a node the new one comes after: the two lifetimes
 * cannot overlap.
 */

enum { GRAPH_MEMORY_RESERVE = 0, GRAPH_MEMORY_ALLOCATE = 1, GRAPH_MEMORY_LIVE = 2, GRAPH_MEMORY_TRIM = 3,
       GRAPH_MEMORY_GET_ATTRIBUTE = 4, GRAPH_MEMORY_RESET_HIGH = 5 };
enum { OP_GRAPH_MEMORY = 44 };
enum { MEM_ALLOCATION_PINNED = 1, MEM_ACCESS_READ_WRITE = 3 };

static uintptr_t *graph_addresses; /* every address reserved for graph allocations; guarded by graph_lock */
static size_t ngraph_addresses, graph_addresses_cap;

/* One GRAPH_MEMORY request made by `call`; `*value` (when not NULL) is the number the server gives back. */
static cudaError_t graph_memory(uint32_t action, uint64_t a, uint64_t b, uint64_t c, const char *call,
                                uint64_t *value) {
    return numbers_request(OP_GRAPH_MEMORY, action, (const uint64_t[]){a, b, c}, 3, call, value);
}

/* Whether `address` is a graph allocation's. Callers hold graph_lock. */
static int is_graph_allocation(const void *address) {
    for (size_t i = 0; i < ngraph_addresses; i++)
        if (graph_addresses[i] == (uintptr_t)address) return 1;
    return 0;
}

/* An allocation node of `g` whose address the new allocation node `node` may take: every allocation and free of
   that address in `g` comes before `node`, and as many frees as allocations. */
static const struct node *reusable_allocation(struct graph *g, const struct node *node, size_t size) {
    mark_ancestors(g, node->deps, node->ndeps);
    for (size_t i = 0; i < g->n; i++) {
        const struct node *a = g->nodes[i];
        if (a == node || a->type != NODE_MEM_ALLOC || a->reserved < size) continue;
        int before = 1;
        long balance = 0;
        for (size_t j = 0; j < g->n && before; j++) {
            const struct node *other = g->nodes[j];
            if (other == node || (other->type != NODE_MEM_ALLOC && other->type != NODE_MEM_FREE) || other->address != a->address)
                continue;
            before = other->mark != 0;
            balance += other->type == NODE_MEM_ALLOC ? 1 : -1;
        }
        if (before && balance == 0) return a;
    }
    return NULL;
}

/* Give the new allocation node `node` of `g` its address: an earlier allocation's, or a new reservation. Callers
   hold graph_lock. */
static cudaError_t place_allocation(struct graph *g, struct node *node, size_t size) {
    const struct node *earlier = reusable_allocation(g, node, size);
    node->bytesize = size;
    if (earlier) {
        node->address = earlier->address, node->reserved = earlier->reserved;
        return cudaSuccess;
    }
    uint64_t address = 0;
    cudaError_t status = graph_memory(GRAPH_MEMORY_RESERVE, size, 0, 0, node->call, &address);
    if (status != cudaSuccess) return status;
    node->address = (void *)(uintptr_t)address, node->reserved = size;
    graph_addresses = grow(graph_addresses, &graph_addresses_cap, ngraph_addresses, sizeof *graph_addresses);
    graph_addresses[ngraph_addresses++] = (uintptr_t)address;
    return cudaSuccess;
}

/* Pool properties an allocation node accepts: pinned device memory of the one device, reachable from it. */
static cudaError_t check_pool_props(const struct mem_pool_props *props, const struct mem_access_desc *access,
                                    size_t naccess) {
    if (props->allocType != MEM_ALLOCATION_PINNED || props->location.type != MEM_LOCATION_DEVICE || props->handleTypes)
        return cudaErrorInvalidValue;
    if (props->location.id != 0) return cudaErrorInvalidDevice;
    if (naccess > 1 || (naccess && !access)) return cudaErrorInvalidValue;
    if (naccess && (access->location.type != MEM_LOCATION_DEVICE || access->location.id != 0)) return cudaErrorInvalidDevice;
    if (naccess && access->flags != MEM_ACCESS_READ_WRITE) return cudaErrorInvalidValue;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphAddMemAllocNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                            size_t numDependencies, struct mem_alloc_node_params *nodeParams) {
    if (!nodeParams || !nodeParams->bytesize) return record(cudaErrorInvalidValue);
    cudaError_t status = check_pool_props(&nodeParams->poolProps, nodeParams->accessDescs, nodeParams->accessDescCount);
    if (status == cudaSuccess)
        status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_MEM_ALLOC, "cudaGraphAddMemAllocNode");
    if (status != cudaSuccess) return record(status);
    struct node *node = *pGraphNode;
    pthread_mutex_lock(&graph_lock);
    status = place_allocation(graph, node, nodeParams->bytesize);
    pthread_mutex_unlock(&graph_lock);
    if (status != cudaSuccess) {
        drop_new_node(graph, node), *pGraphNode = NULL;
        return record(status);
    }
    node->pool_props = nodeParams->poolProps;
    node->naccess = nodeParams->accessDescCount;
    if (node->naccess) node->access = nodeParams->accessDescs[0];
    nodeParams->dptr = node->address;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphAddMemFreeNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                           size_t numDependencies, void *dptr) {
    pthread_mutex_lock(&graph_lock);
    int known = is_graph_allocation(dptr);
    pthread_mutex_unlock(&graph_lock);
    if (!known) return record(cudaErrorInvalidValue);
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_MEM_FREE, "cudaGraphAddMemFreeNode");
    if (status == cudaSuccess) (*pGraphNode)->address = dptr;
    return record(status);
}

EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(struct node *node, struct mem_alloc_node_params *params_out) {
    if (!node || !params_out || node->type != NODE_MEM_ALLOC) return record(cudaErrorInvalidValue);
    *params_out = (struct mem_alloc_node_params){node->pool_props, node->naccess ? &node->access : NULL, node->naccess,
                                                 node->bytesize, node->address};
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(struct node *node, void *dptr_out) {
    if (!node || !dptr_out || node->type != NODE_MEM_FREE) return record(cudaErrorInvalidValue);
    *(void **)dptr_out = node->address;
    return cudaSuccess;
}

/* cudaMallocAsync (or cudaMallocFromPoolAsync) on a capturing stream: an allocation node of the capture's graph,
   in the device's memory whatever the pool. */
static cudaError_t capture_allocation(void **ptr, size_t size, void *stream, const char *call) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    if (status == cudaSuccess && !size) status = cudaErrorInvalidValue;
    if (status == cudaSuccess) {
        struct graph *g = s->capture->graph;
        struct node *node = capture_node(s, NODE_MEM_ALLOC, call, NULL);
        node->pool_props = (struct mem_pool_props){.allocType = MEM_ALLOCATION_PINNED,
                                                   .location = {MEM_LOCATION_DEVICE, 0}};
        status = place_allocation(g, node, size);
        if (status == cudaSuccess) *ptr = node->address;
        else s->capture->status = CAPTURE_INVALIDATED;
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* cudaFreeAsync on a capturing stream: a free node of the capture's graph, for a graph allocation. */
static cudaError_t capture_free(void *ptr, void *stream, const char *call) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    if (status == cudaSuccess && !is_graph_allocation(ptr)) status = cudaErrorInvalidValue;
    if (status == cudaSuccess) capture_node(s, NODE_MEM_FREE, call, NULL)->address = ptr;
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* An allocation node's replay: its memory, allocated at its address as an operation of `stream`. */
static cudaError_t allocate_in_graph(const struct node *op, void *stream) {
    return graph_memory(GRAPH_MEMORY_ALLOCATE, (uintptr_t)op->address, op->bytesize, (uintptr_t)stream, op->call, NULL);
}

/* Before a launch of `x`: an allocation of its last launch still live is freed on `stream` with
   cudaGraphInstantiateFlagAutoFreeOnLaunch, else the launch fails. */
static cudaError_t settle_graph_allocations(struct graph_exec *x, void *stream) {
    for (size_t i = 0; i < x->n; i++) {
        const struct node *op = &x->nodes[i].op;
        uint64_t live = 0;
        if (op->type != NODE_MEM_ALLOC) continue;
        cudaError_t status = graph_memory(GRAPH_MEMORY_LIVE, (uintptr_t)op->address, 0, 0, "cudaGraphLaunch", &live);
        if (status == cudaSuccess && live)
            status = x->flags & INSTANTIATE_AUTO_FREE_ON_LAUNCH ? free_async(op->address, stream, "cudaGraphLaunch")
                                                                : cudaErrorInvalidValue;
        if (status != cudaSuccess) return status;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGraphMemTrim(int device) {
    if (device != 0) return record(cudaErrorInvalidDevice);
    return record(graph_memory(GRAPH_MEMORY_TRIM, 0, 0, 0, "cudaDeviceGraphMemTrim", NULL));
}

enum { GRAPH_MEM_USED_HIGH = 1, GRAPH_MEM_RESERVED_HIGH = 3 };

EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, int attr, void *value) {
    if (device != 0) return record(cudaErrorInvalidDevice);
    if (!value || attr < 0 || attr > GRAPH_MEM_RESERVED_HIGH) return record(cudaErrorInvalidValue);
    uint64_t figure = 0;
    cudaError_t status = graph_memory(GRAPH_MEMORY_GET_ATTRIBUTE, (uint64_t)attr, 0, 0, "cudaDeviceGetGraphMemAttribute", &figure);
    if (status == cudaSuccess) *(uint64_t *)value = figure;
    return record(status);
}

/* Only the high-water marks may be set, and only to 0: back to the current figure. */
EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, int attr, void *value) {
    if (device != 0) return record(cudaErrorInvalidDevice);
    if (!value || (attr != GRAPH_MEM_USED_HIGH && attr != GRAPH_MEM_RESERVED_HIGH) || *(uint64_t *)value)
        return record(cudaErrorInvalidValue);
    return record(graph_memory(GRAPH_MEMORY_RESET_HIGH, (uint64_t)attr, 0, 0, "cudaDeviceSetGraphMemAttribute", NULL));
}
