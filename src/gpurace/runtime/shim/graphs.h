/* CUDA graphs: stream capture, the explicit graph API, and launching a graph (included by cudart.c).
 *
 * A graph is kept here, in the program, as nodes with the parameters of their operation (a kernel node keeps
 * a copy of its argument values, taken when it was added or captured, as CUDA does) and the nodes each
 * depends on. The device server knows nothing of graphs: launching one replays it with the requests every
 * other call makes. Each node of an instantiated graph has a non-blocking stream and an event of its own;
 * a node's stream waits for the events recorded after each of its predecessors (a root node's, for the
 * launch stream's position at the launch, and for the previous launch of the same graph), its operation is
 * issued on it through the runtime's ordinary paths (launch, copy, fill, host functions, events), and the
 * launch stream then waits for the events of the nodes nothing depends on. The server's vector clocks
 * (streams.py) thus order two nodes exactly when a path of edges joins them: nodes with no path between
 * them may run concurrently on a GPU, and their conflicting accesses are races. Every operation of a node
 * is reported at the host line that made the node (the captured call, or the cudaGraphAdd*Node call).
 *
 * Host nodes run in the calling thread after it waited for their node's stream (as cudaLaunchHostFunc
 * does), and a copy into pageable host memory makes the host wait for it: that orders the nodes issued
 * after them after their predecessors, so the replay issues such nodes as late as their dependencies allow,
 * which orders as little as possible.
 *
 * Stream capture: while a stream captures, the kernel launches, asynchronous copies and memsets, host
 * functions and event records and waits issued to it become nodes (or edges) of the capture's graph
 * instead of running. An event recorded in a capture carries the nodes before it; a stream that waits for
 * it joins the capture (a fork), and the origin stream must wait for an event recorded on every other
 * stream of the capture before cudaStreamEndCapture (a join). Calls a capture does not allow return the
 * error NVIDIA's runtime returns and invalidate the capture.
 */

enum {
    cudaErrorIllegalState = 401,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureUnmatched = 903,
    cudaErrorStreamCaptureUnjoined = 904,
    cudaErrorStreamCaptureIsolation = 905,
    cudaErrorStreamCaptureImplicit = 906,
    cudaErrorCapturedEvent = 907,
    cudaErrorStreamCaptureWrongThread = 908,
    cudaErrorGraphExecUpdateFailure = 910,
};

enum { NODE_KERNEL = 0, NODE_MEMCPY = 1, NODE_MEMSET = 2, NODE_HOST = 3, NODE_GRAPH = 4, NODE_EMPTY = 5,
       NODE_WAIT_EVENT = 6, NODE_EVENT_RECORD = 7, NODE_MEM_ALLOC = 10, NODE_MEM_FREE = 11, NODE_CONDITIONAL = 13 };

enum { MODE_GLOBAL = 0, MODE_THREAD_LOCAL = 1, MODE_RELAXED = 2 };
enum { CAPTURE_NONE = 0, CAPTURE_ACTIVE = 1, CAPTURE_INVALIDATED = 2 };
enum { UPDATE_SUCCESS = 0, UPDATE_TOPOLOGY_CHANGED = 2, UPDATE_NODE_TYPE_CHANGED = 3, UPDATE_PARAMETERS_CHANGED = 5 };
enum { INSTANTIATE_AUTO_FREE_ON_LAUNCH = 1, INSTANTIATE_DEVICE_LAUNCH = 4 };
enum { CONDITION_ASSIGN_DEFAULT = 1 }; /* cudaGraphCondAssignDefault */
enum { EVENT_EXTERNAL = 1 }; /* cudaEventRecordExternal, cudaEventWaitExternal */
#define STREAM_NON_BLOCKING 1u
#define GRAPH_NODE_STREAM (1u << 31) /* the server names such a stream for what it is (protocol.py) */

/* CUDA 13's parameter structs (driver_types.h), the copy ones under names of their own. */
struct copy_pos { size_t x, y, z; };
struct copy_pitched_ptr { void *ptr; size_t pitch, xsize, ysize; };
struct copy_extent { size_t width, height, depth; };
struct copy_3d_params {
    void *srcArray;
    struct copy_pos srcPos;
    struct copy_pitched_ptr srcPtr;
    void *dstArray;
    struct copy_pos dstPos;
    struct copy_pitched_ptr dstPtr;
    struct copy_extent extent;
    int kind;
};
struct cudaMemsetParams {
    void *dst;
    size_t pitch;
    unsigned int value, elementSize;
    size_t width, height;
};
struct cudaKernelNodeParams {
    void *func;
    dim3 gridDim, blockDim;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
};
struct cudaHostNodeParams { void (*fn)(void *); void *userData; };
struct mem_location {
    int type; /* cudaMemLocationType: 0 invalid, 1 device, 2 host, 3 host NUMA node, 4 current host NUMA node */
    int id;
};
enum { MEM_LOCATION_DEVICE = 1, MEM_LOCATION_HOST = 2, MEM_LOCATION_HOST_NUMA = 3, MEM_LOCATION_HOST_NUMA_CURRENT = 4 };
struct mem_pool_props {
    int allocType, handleTypes;
    struct mem_location location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};
struct mem_access_desc { struct mem_location location; int flags; };
struct mem_alloc_node_params {
    struct mem_pool_props poolProps;
    const struct mem_access_desc *accessDescs;
    size_t accessDescCount, bytesize;
    void *dptr;
};
typedef struct { unsigned char from_port, to_port, type, reserved[5]; } cudaGraphEdgeData;
typedef struct { int result; void *errorNode, *errorFromNode; } cudaGraphExecUpdateResultInfo;

/* A copy of `height` rows of `width` bytes, `depth` times: rows `pitch` bytes apart, slices `slice` apart. */
struct copy_params {
    char *dst;
    const char *src;
    size_t dpitch, dslice, spitch, sslice, width, height, depth;
    int kind;
};

struct graph;

/* One node: its operation's parameters, the call that made it (name and host site), its dependencies. */
struct node {
    struct graph *graph;
    int type;
    const char *call;
    struct stack site;
    struct node **deps;
    size_t ndeps, deps_cap;
    const void *func; /* kernel */
    dim3 grid, block;
    size_t shared;
    uint8_t *args; /* the argument values, at the kernel's parameter offsets */
    void **argv;   /* pointers into `args`, one per parameter (cudaGraphKernelNodeGetParams) */
    struct copy_params copy; /* memcpy */
    void *dst;               /* memset: rows of `width` bytes */
    size_t pitch, width, height;
    int value;
    unsigned element, given_value; /* memset: the element size and value as given (cudaGraphMemsetNodeGetParams) */
    void (*fn)(void *); /* host */
    void *data;
    struct graph *child; /* child graph: a copy of the graph it was given */
    void *event;         /* event record or wait */
    void *address;       /* memory alloc or free: the graph allocation (graph_memory.h) */
    size_t bytesize, reserved;        /* memory alloc: its size, and the bytes reserved at its address */
    struct mem_pool_props pool_props; /* memory alloc: as given, with its access descriptor (one device: one) */
    struct mem_access_desc access;
    size_t naccess;
    uint64_t handle;       /* conditional: its handle (graph_conditionals.h) */
    int condition;         /* conditional: cudaGraphCondTypeIf, While or Switch */
    struct graph **bodies; /* conditional: its body graphs, which the node owns */
    unsigned nbodies;
    size_t mark;         /* scratch, while a graph is walked: the node's index in it, or whether it was reached */
};

/* A conditional handle of a graph: the address of its condition, and its default (graph_conditionals.h). */
struct conditional_handle {
    uint64_t address;
    unsigned default_value, flags;
};

struct graph {
    struct node **nodes; /* in the order they were added */
    size_t n, cap;
    struct conditional_handle *handles;
    size_t nhandles, handles_cap;
};

/* A node of an instantiated graph: the graph's node it came from, a copy of its operation, and where its
   replay runs. Child graphs are inlined, between two empty nodes. */
struct exec_node {
    const struct node *origin;
    struct node op;
    size_t *preds; /* indices of earlier exec nodes */
    size_t npreds;
    int sink; /* nothing depends on it */
    void *stream, *event;
    struct graph_exec **bodies; /* conditional: its body graphs, instantiated */
    int disabled;               /* cudaGraphNodeSetEnabled: an empty node until enabled again */
};

struct graph_exec {
    struct exec_node *nodes;
    size_t n, cap;
    size_t *order; /* the order replays issue the nodes in */
    void *start;   /* recorded on the launch stream at a launch: the root nodes wait for it */
    void *done;    /* recorded on the launch stream after a launch: the next launch's root nodes wait for it */
    int launched;
    unsigned long long flags; /* cudaGraphInstantiate's */
    struct conditional_handle *defaults; /* the handles whose default each launch assigns */
    size_t ndefaults, defaults_cap;
};

/* A capture sequence, and the streams taking part in one. */
struct capture {
    unsigned long long id;
    struct graph *graph;
    int to_graph; /* cudaStreamBeginCaptureToGraph: the graph is the program's */
    void *origin;
    int mode, status;
    pthread_t thread;
};

struct capturing_stream {
    void *stream;
    struct capture *capture;
    struct node **deps; /* the nodes the stream's next captured operation depends on */
    size_t ndeps, cap;
};

/* An event recorded on a capturing stream: the nodes before it, in its capture. */
struct captured_event {
    void *event;
    struct capture *capture;
    struct node **deps;
    size_t ndeps, cap;
};

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER; /* guards the capture tables; taken before rt.lock */
static struct capturing_stream *capturing_streams;
static size_t ncapturing, capturing_cap;
static struct captured_event *captured_events;
static size_t ncaptured_events, captured_events_cap;
static unsigned long long last_capture_id;
static __thread int thread_capture_mode = MODE_GLOBAL;

/* The streams the program created, and whether with cudaStreamNonBlocking: the legacy stream synchronises
   with the others, so that using it while one of them captures is an error. */
struct stream_kind {
    void *stream;
    int non_blocking;
};
static struct stream_kind *stream_kinds;
static size_t nstream_kinds, stream_kinds_cap;

static void note_stream_flags(void *stream, unsigned int flags) {
    pthread_mutex_lock(&graph_lock);
    size_t i = 0;
    while (i < nstream_kinds && stream_kinds[i].stream != stream) i++;
    if (i == nstream_kinds) stream_kinds = grow(stream_kinds, &stream_kinds_cap, nstream_kinds++, sizeof *stream_kinds);
    stream_kinds[i] = (struct stream_kind){stream, (flags & STREAM_NON_BLOCKING) != 0};
    pthread_mutex_unlock(&graph_lock);
}

/* Whether the program made `stream`; `*flags` its cudaStreamNonBlocking flag, if so. */
static int stream_flags(const void *stream, unsigned int *flags) {
    pthread_mutex_lock(&graph_lock);
    size_t i = 0;
    while (i < nstream_kinds && stream_kinds[i].stream != stream) i++;
    if (i < nstream_kinds) *flags = stream_kinds[i].non_blocking ? STREAM_NON_BLOCKING : 0;
    pthread_mutex_unlock(&graph_lock);
    return i < nstream_kinds;
}

/* Whether `stream` synchronises with the legacy stream (the per-thread default stream does). Callers hold
   graph_lock. */
static int blocking_stream(const void *stream) {
    for (size_t i = 0; i < nstream_kinds; i++)
        if (stream_kinds[i].stream == stream) return !stream_kinds[i].non_blocking;
    return 1;
}

static struct node **add_unique(struct node **list, size_t *n, size_t *cap, struct node *node) {
    for (size_t i = 0; i < *n; i++)
        if (list[i] == node) return list;
    list = grow(list, cap, *n, sizeof *list);
    list[(*n)++] = node;
    return list;
}

/* ------------------------------------------------------------------------ */
/* Graphs and nodes                                                          */
/* ------------------------------------------------------------------------ */

static struct graph *new_graph(void) {
    struct graph *g = calloc(1, sizeof *g);
    if (!g) die("%s", "out of host memory");
    return g;
}

static void destroy_graph(struct graph *g);

/* Free what a node's operation owns. */
static void free_operation(struct node *op) {
    free(op->args);
    free(op->argv);
    if (op->child) destroy_graph(op->child);
    for (unsigned i = 0; i < op->nbodies; i++) destroy_graph(op->bodies[i]);
    free(op->bodies);
}

static void free_node(struct node *node) {
    free(node->deps);
    free_operation(node);
    free(node);
}

static void destroy_graph(struct graph *g) {
    for (size_t i = 0; i < g->n; i++) free_node(g->nodes[i]);
    free(g->nodes);
    free(g->handles);
    free(g);
}

static int in_graph(const struct graph *g, const struct node *node) {
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i] == node) return 1;
    return 0;
}

/* A new node of `type` in `g` after `deps` (which must be nodes of `g`), made by `call` at `site`. */
static struct node *add_node(struct graph *g, int type, struct node *const *deps, size_t ndeps, const char *call,
                             const struct stack *site) {
    struct node *node = calloc(1, sizeof *node);
    if (!node) die("%s", "out of host memory");
    node->graph = g, node->type = type, node->call = call, node->site = *site;
    for (size_t i = 0; i < ndeps; i++) node->deps = add_unique(node->deps, &node->ndeps, &node->deps_cap, deps[i]);
    g->nodes = grow(g->nodes, &g->cap, g->n, sizeof *g->nodes);
    g->nodes[g->n++] = node;
    return node;
}

/* The parameter layout of the kernel `func` (NULL: not a kernel of this program). */
static struct kernel *kernel_of(const void *func) {
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = find_kernel(func);
    pthread_mutex_unlock(&rt.lock);
    return k;
}

static size_t parameter_bytes(const struct kernel *k) {
    size_t nbytes = 0;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->offsets[i] + k->sizes[i] > nbytes) nbytes = k->offsets[i] + k->sizes[i];
    return nbytes;
}

/* Point `node`'s argv at its argument values. */
static void index_arguments(struct node *node, const struct kernel *k) {
    free(node->argv);
    node->argv = calloc(k->nparams + 1, sizeof(void *));
    if (!node->argv) die("%s", "out of host memory");
    for (uint32_t i = 0; i < k->nparams; i++) node->argv[i] = node->args + k->offsets[i];
}

/* Make `node` the launch of `func` with the values `args` (or, from the `extra` format, a packed buffer)
   point to, copied now. */
static cudaError_t set_kernel(struct node *node, const void *func, dim3 grid, dim3 block, size_t shared,
                              void **args, void **extra) {
    struct kernel *k = kernel_of(func);
    if (!k) return cudaErrorInvalidDeviceFunction;
    size_t nbytes = parameter_bytes(k);
    uint8_t *values = calloc(nbytes + 1, 1);
    if (!values) die("%s", "out of host memory");
    if (args) {
        for (uint32_t i = 0; i < k->nparams; i++) memcpy(values + k->offsets[i], args[i], k->sizes[i]);
    } else if (extra) {
        const void *buffer = NULL;
        size_t size = 0;
        for (size_t i = 0; extra[i]; i += 2) {
            if (extra[i] == (void *)1) buffer = extra[i + 1];
            else if (extra[i] == (void *)2) size = *(size_t *)extra[i + 1];
            else { free(values); return cudaErrorInvalidValue; }
        }
        if (!buffer || size < nbytes) { free(values); return cudaErrorInvalidValue; }
        memcpy(values, buffer, nbytes);
    } else if (k->nparams) {
        free(values);
        return cudaErrorInvalidValue;
    }
    free(node->args);
    node->args = values;
    node->func = func, node->grid = grid, node->block = block, node->shared = shared;
    index_arguments(node, k);
    return cudaSuccess;
}

static cudaError_t set_kernel_params(struct node *node, const struct cudaKernelNodeParams *p) {
    if (!p) return cudaErrorInvalidValue;
    if (p->kernelParams && p->extra) return cudaErrorInvalidValue;
    return set_kernel(node, p->func, p->gridDim, p->blockDim, p->sharedMemBytes, p->kernelParams, p->extra);
}

/* A node's copy from cudaMemcpy3DParms: pitched pointers only (cudaArrays stop the program). */
static cudaError_t copy_from_3d(struct copy_params *c, const struct copy_3d_params *p, const char *call) {
    if (!p) return cudaErrorInvalidValue;
    if (p->srcArray || p->dstArray) {
        char what[160];
        snprintf(what, sizeof what, "%s with a cudaArray (only pitched pointers are supported)", call);
        unsupported(what, NULL);
    }
    if (p->kind < cudaMemcpyHostToHost || p->kind > 4) return cudaErrorInvalidMemcpyDirection;
    const struct copy_pitched_ptr *s = &p->srcPtr, *d = &p->dstPtr;
    size_t spitch = s->pitch ? s->pitch : p->extent.width, dpitch = d->pitch ? d->pitch : p->extent.width;
    if (p->extent.width > spitch || p->extent.width > dpitch) return cudaErrorInvalidPitchValue;
    c->src = (const char *)s->ptr + p->srcPos.z * spitch * s->ysize + p->srcPos.y * spitch + p->srcPos.x;
    c->dst = (char *)d->ptr + p->dstPos.z * dpitch * d->ysize + p->dstPos.y * dpitch + p->dstPos.x;
    c->spitch = spitch, c->sslice = spitch * s->ysize;
    c->dpitch = dpitch, c->dslice = dpitch * d->ysize;
    c->width = p->extent.width, c->height = p->extent.height, c->depth = p->extent.depth;
    c->kind = p->kind;
    return cudaSuccess;
}

static void copy_1d(struct copy_params *c, void *dst, const void *src, size_t count, int kind) {
    *c = (struct copy_params){.dst = dst, .src = src, .dpitch = count, .spitch = count, .width = count,
                              .height = 1, .depth = 1, .kind = kind};
}

/* A memset node: bytes, or 2- or 4-byte elements whose bytes are all the same (what a byte memset can do). */
static cudaError_t set_memset(struct node *node, const struct cudaMemsetParams *p) {
    if (!p || !p->dst) return cudaErrorInvalidValue;
    unsigned e = p->elementSize, v = p->value;
    if (e != 1 && e != 2 && e != 4) return cudaErrorInvalidValue;
    if (p->height > 1 && p->pitch < p->width * e) return cudaErrorInvalidValue;
    if ((e == 2 && (v >> 8 & 0xff) != (v & 0xff)) || (e == 4 && v != (v & 0xff) * 0x01010101u))
        unsupported("cudaGraphAddMemsetNode with 2- or 4-byte elements whose bytes differ", NULL);
    node->dst = p->dst, node->pitch = p->height > 1 ? p->pitch : p->width * e;
    node->width = p->width * e, node->height = p->height, node->value = (int)(v & 0xff);
    node->element = e, node->given_value = v;
    return cudaSuccess;
}

static struct graph *clone_graph(const struct graph *g);

/* A copy of `from`'s operation (not its place in a graph). */
static void copy_operation(struct node *to, const struct node *from) {
    struct node **deps = to->deps;
    size_t ndeps = to->ndeps, deps_cap = to->deps_cap;
    struct graph *graph = to->graph;
    *to = *from;
    to->graph = graph, to->deps = deps, to->ndeps = ndeps, to->deps_cap = deps_cap;
    to->args = NULL, to->argv = NULL, to->child = NULL, to->bodies = NULL;
    if (from->type == NODE_KERNEL) {
        struct kernel *k = kernel_of(from->func);
        size_t nbytes = parameter_bytes(k);
        to->args = malloc(nbytes + 1);
        if (!to->args) die("%s", "out of host memory");
        memcpy(to->args, from->args, nbytes);
        index_arguments(to, k);
    }
    if (from->child) to->child = clone_graph(from->child);
    if (from->nbodies) {
        to->bodies = malloc(from->nbodies * sizeof *to->bodies);
        if (!to->bodies) die("%s", "out of host memory");
        for (unsigned i = 0; i < from->nbodies; i++) to->bodies[i] = clone_graph(from->bodies[i]);
    }
}

static size_t index_in(const struct graph *g, const struct node *node) {
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i] == node) return i;
    return (size_t)-1;
}

/* Number `g`'s nodes (`mark`), so that walks find a node's index at once. */
static void number_nodes(const struct graph *g) {
    for (size_t i = 0; i < g->n; i++) g->nodes[i]->mark = i;
}

static struct graph *clone_graph(const struct graph *g) {
    struct graph *copy = new_graph();
    for (size_t i = 0; i < g->nhandles; i++)
        copy->handles = grow(copy->handles, &copy->handles_cap, copy->nhandles, sizeof *copy->handles),
        copy->handles[copy->nhandles++] = g->handles[i];
    number_nodes(g);
    for (size_t i = 0; i < g->n; i++) {
        struct node *node = add_node(copy, g->nodes[i]->type, NULL, 0, g->nodes[i]->call, &g->nodes[i]->site);
        copy_operation(node, g->nodes[i]);
    }
    for (size_t i = 0; i < g->n; i++)
        for (size_t d = 0; d < g->nodes[i]->ndeps; d++) {
            struct node *dep = copy->nodes[g->nodes[i]->deps[d]->mark];
            copy->nodes[i]->deps = add_unique(copy->nodes[i]->deps, &copy->nodes[i]->ndeps, &copy->nodes[i]->deps_cap, dep);
        }
    return copy;
}

/* `g`'s nodes in an order where each comes after its dependencies; 0 when the edges make a cycle. */
static int topological(const struct graph *g, struct node **out) {
    size_t done = 0;
    char *placed = calloc(g->n + 1, 1);
    if (!placed) die("%s", "out of host memory");
    number_nodes(g);
    while (done < g->n) {
        size_t before = done;
        for (size_t i = 0; i < g->n; i++) {
            if (placed[i]) continue;
            int ready = 1;
            for (size_t d = 0; d < g->nodes[i]->ndeps && ready; d++) ready = placed[g->nodes[i]->deps[d]->mark];
            if (ready) placed[i] = 1, out[done++] = g->nodes[i];
        }
        if (done == before) break;
    }
    free(placed);
    return done == g->n;
}

/* ------------------------------------------------------------------------ */
/* The explicit API                                                          */
/* ------------------------------------------------------------------------ */

EXPORT cudaError_t cudaGraphCreate(struct graph **pGraph, unsigned int flags) {
    if (!pGraph || flags) return record(cudaErrorInvalidValue);
    *pGraph = new_graph();
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroy(struct graph *graph) {
    if (!graph) return record(cudaErrorInvalidValue);
    destroy_graph(graph);
    return cudaSuccess;
}

/* The checks every cudaGraphAdd*Node makes; the new node, made at the program's call site. */
static cudaError_t new_node(struct node **out, struct graph *g, struct node *const *deps, size_t ndeps, int type,
                            const char *call) {
    if (!out || !g || (ndeps && !deps)) return cudaErrorInvalidValue;
    for (size_t i = 0; i < ndeps; i++)
        if (!deps[i] || deps[i]->graph != g || !in_graph(g, deps[i])) return cudaErrorInvalidValue;
    struct stack site;
    capture(&site);
    *out = add_node(g, type, deps, ndeps, call, &site);
    return cudaSuccess;
}

/* Undo new_node when the parameters are refused. */
static void drop_new_node(struct graph *g, struct node *node) {
    g->n--;
    free_node(node);
}

EXPORT cudaError_t cudaGraphAddKernelNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                          size_t numDependencies, const struct cudaKernelNodeParams *pNodeParams) {
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_KERNEL, "kernel launch");
    if (status != cudaSuccess) return record(status);
    status = set_kernel_params(*pGraphNode, pNodeParams);
    if (status != cudaSuccess) drop_new_node(graph, *pGraphNode), *pGraphNode = NULL;
    return record(status);
}

/* The node calls, for `call` (theirs, or cudaGraphAddNode, graph_conditionals.h). */
static cudaError_t add_memcpy_node(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                   size_t numDependencies, const struct copy_3d_params *pCopyParams, const char *call) {
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_MEMCPY, call);
    if (status != cudaSuccess) return record(status);
    status = copy_from_3d(&(*pGraphNode)->copy, pCopyParams, call);
    if (status != cudaSuccess) drop_new_node(graph, *pGraphNode), *pGraphNode = NULL;
    return record(status);
}

static cudaError_t add_memset_node(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                   size_t numDependencies, const struct cudaMemsetParams *pMemsetParams, const char *call) {
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_MEMSET, call);
    if (status != cudaSuccess) return record(status);
    status = set_memset(*pGraphNode, pMemsetParams);
    if (status != cudaSuccess) drop_new_node(graph, *pGraphNode), *pGraphNode = NULL;
    return record(status);
}

static cudaError_t add_host_node(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                 size_t numDependencies, const struct cudaHostNodeParams *pNodeParams, const char *call) {
    if (!pNodeParams || !pNodeParams->fn) return record(cudaErrorInvalidValue);
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_HOST, call);
    if (status == cudaSuccess) (*pGraphNode)->fn = pNodeParams->fn, (*pGraphNode)->data = pNodeParams->userData;
    return record(status);
}

/* An event record (NODE_EVENT_RECORD) or event wait (NODE_WAIT_EVENT) node. */
static cudaError_t add_event_node(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                  size_t numDependencies, void *event, int type, const char *call) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, type, call);
    if (status == cudaSuccess) (*pGraphNode)->event = event;
    return record(status);
}

EXPORT cudaError_t cudaGraphAddMemcpyNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                          size_t numDependencies, const struct copy_3d_params *pCopyParams) {
    return add_memcpy_node(pGraphNode, graph, pDependencies, numDependencies, pCopyParams, "cudaGraphAddMemcpyNode");
}

EXPORT cudaError_t cudaGraphAddMemcpyNode1D(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                            size_t numDependencies, void *dst, const void *src, size_t count, int kind) {
    if (kind < cudaMemcpyHostToHost || kind > 4) return record(cudaErrorInvalidMemcpyDirection);
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_MEMCPY, "cudaGraphAddMemcpyNode1D");
    if (status == cudaSuccess) copy_1d(&(*pGraphNode)->copy, dst, src, count, kind);
    return record(status);
}

EXPORT cudaError_t cudaGraphAddMemsetNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                          size_t numDependencies, const struct cudaMemsetParams *pMemsetParams) {
    return add_memset_node(pGraphNode, graph, pDependencies, numDependencies, pMemsetParams, "cudaGraphAddMemsetNode");
}

EXPORT cudaError_t cudaGraphAddHostNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                        size_t numDependencies, const struct cudaHostNodeParams *pNodeParams) {
    return add_host_node(pGraphNode, graph, pDependencies, numDependencies, pNodeParams, "cudaGraphAddHostNode");
}

EXPORT cudaError_t cudaGraphAddEmptyNode(struct node **pGraphNode, struct graph *graph, struct node *const *pDependencies,
                                         size_t numDependencies) {
    return record(new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_EMPTY, "cudaGraphAddEmptyNode"));
}

EXPORT cudaError_t cudaGraphAddChildGraphNode(struct node **pGraphNode, struct graph *graph,
                                              struct node *const *pDependencies, size_t numDependencies,
                                              struct graph *childGraph) {
    if (!childGraph || childGraph == graph) return record(cudaErrorInvalidValue);
    cudaError_t status = new_node(pGraphNode, graph, pDependencies, numDependencies, NODE_GRAPH, "cudaGraphAddChildGraphNode");
    if (status == cudaSuccess) (*pGraphNode)->child = clone_graph(childGraph);
    return record(status);
}

EXPORT cudaError_t cudaGraphAddEventRecordNode(struct node **pGraphNode, struct graph *graph,
                                               struct node *const *pDependencies, size_t numDependencies, void *event) {
    return add_event_node(pGraphNode, graph, pDependencies, numDependencies, event, NODE_EVENT_RECORD,
                          "cudaGraphAddEventRecordNode");
}

EXPORT cudaError_t cudaGraphAddEventWaitNode(struct node **pGraphNode, struct graph *graph,
                                             struct node *const *pDependencies, size_t numDependencies, void *event) {
    return add_event_node(pGraphNode, graph, pDependencies, numDependencies, event, NODE_WAIT_EVENT,
                          "cudaGraphAddEventWaitNode");
}

/* Edges carry data only for programmatic dependent launches, which gpurace does not model. */
static void refuse_edge_data(const cudaGraphEdgeData *data, size_t n, const char *call) {
    static const cudaGraphEdgeData none;
    for (size_t i = 0; data && i < n; i++)
        if (memcmp(&data[i], &none, sizeof none)) {
            char what[160];
            snprintf(what, sizeof what, "%s with edge data other than the default (programmatic dependencies)", call);
            unsupported(what, NULL);
        }
}

static int has_edge(const struct node *from, const struct node *to) {
    for (size_t i = 0; i < to->ndeps; i++)
        if (to->deps[i] == from) return 1;
    return 0;
}

EXPORT cudaError_t cudaGraphAddDependencies(struct graph *graph, struct node *const *from, struct node *const *to,
                                            const cudaGraphEdgeData *edgeData, size_t numDependencies) {
    refuse_edge_data(edgeData, numDependencies, "cudaGraphAddDependencies");
    if (!graph || (numDependencies && (!from || !to))) return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++)
        if (!from[i] || !to[i] || from[i] == to[i] || !in_graph(graph, from[i]) || !in_graph(graph, to[i]) ||
            has_edge(from[i], to[i]))
            return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++) to[i]->deps = add_unique(to[i]->deps, &to[i]->ndeps, &to[i]->deps_cap, from[i]);
    return cudaSuccess;
}

static void remove_edge(struct node *from, struct node *to) {
    for (size_t i = 0; i < to->ndeps; i++)
        if (to->deps[i] == from) {
            memmove(&to->deps[i], &to->deps[i + 1], (to->ndeps - i - 1) * sizeof *to->deps);
            to->ndeps--;
            return;
        }
}

EXPORT cudaError_t cudaGraphRemoveDependencies(struct graph *graph, struct node *const *from, struct node *const *to,
                                               const cudaGraphEdgeData *edgeData, size_t numDependencies) {
    refuse_edge_data(edgeData, numDependencies, "cudaGraphRemoveDependencies");
    if (!graph || (numDependencies && (!from || !to))) return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++)
        if (!from[i] || !to[i] || !in_graph(graph, to[i]) || !has_edge(from[i], to[i])) return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++) remove_edge(from[i], to[i]);
    return cudaSuccess;
}

/* The graph's nodes (its root nodes when `roots_only`): their number in *count when `out` is NULL, else up to
   *count of them in `out`, the rest of it NULL, and how many were given in *count (NVIDIA's convention). */
static cudaError_t list_nodes(const struct graph *g, struct node **out, size_t *count, int roots_only) {
    if (!g || !count) return record(cudaErrorInvalidValue);
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (roots_only && g->nodes[i]->ndeps) continue;
        if (out && n < *count) out[n] = g->nodes[i];
        n++;
    }
    for (size_t i = n; out && i < *count; i++) out[i] = NULL;
    if (!out || n < *count) *count = n;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphGetNodes(struct graph *graph, struct node **nodes, size_t *numNodes) {
    return list_nodes(graph, nodes, numNodes, 0);
}

EXPORT cudaError_t cudaGraphGetRootNodes(struct graph *graph, struct node **pRootNodes, size_t *pNumRootNodes) {
    return list_nodes(graph, pRootNodes, pNumRootNodes, 1);
}

EXPORT cudaError_t cudaGraphGetEdges(struct graph *graph, struct node **from, struct node **to,
                                     cudaGraphEdgeData *edgeData, size_t *numEdges) {
    if (!graph || !numEdges || (!from != !to)) return record(cudaErrorInvalidValue);
    size_t n = 0;
    for (size_t i = 0; i < graph->n; i++)
        for (size_t d = 0; d < graph->nodes[i]->ndeps; d++, n++)
            if (from && n < *numEdges) {
                from[n] = graph->nodes[i]->deps[d], to[n] = graph->nodes[i];
                if (edgeData) memset(&edgeData[n], 0, sizeof *edgeData);
            }
    for (size_t i = n; from && i < *numEdges; i++) from[i] = to[i] = NULL;
    if (!from || n < *numEdges) *numEdges = n;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphNodeGetType(struct node *node, int *pType) {
    if (!node || !pType) return record(cudaErrorInvalidValue);
    *pType = node->type;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphKernelNodeGetParams(struct node *node, struct cudaKernelNodeParams *pNodeParams) {
    if (!node || !pNodeParams || node->type != NODE_KERNEL) return record(cudaErrorInvalidValue);
    *pNodeParams = (struct cudaKernelNodeParams){(void *)node->func, node->grid, node->block,
                                                 (unsigned)node->shared, node->argv, NULL};
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphKernelNodeSetParams(struct node *node, const struct cudaKernelNodeParams *pNodeParams) {
    if (!node || node->type != NODE_KERNEL) return record(cudaErrorInvalidValue);
    return record(set_kernel_params(node, pNodeParams));
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(struct node *node, const struct copy_3d_params *pNodeParams) {
    if (!node || node->type != NODE_MEMCPY) return record(cudaErrorInvalidValue);
    return record(copy_from_3d(&node->copy, pNodeParams, "cudaGraphMemcpyNodeSetParams"));
}

EXPORT cudaError_t cudaGraphClone(struct graph **pGraphClone, struct graph *originalGraph) {
    if (!pGraphClone || !originalGraph) return record(cudaErrorInvalidValue);
    *pGraphClone = clone_graph(originalGraph);
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroyNode(struct node *node) {
    if (!node) return record(cudaErrorInvalidValue);
    struct graph *g = node->graph;
    size_t at = index_in(g, node);
    if (at == (size_t)-1) return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < g->n; i++) remove_edge(node, g->nodes[i]);
    memmove(&g->nodes[at], &g->nodes[at + 1], (g->n - at - 1) * sizeof *g->nodes);
    g->n--;
    free_node(node);
    return cudaSuccess;
}

/* ------------------------------------------------------------------------ */
/* Instantiation                                                             */
/* ------------------------------------------------------------------------ */

static size_t add_exec_node(struct graph_exec *x, const struct node *origin, int type, const size_t *preds, size_t npreds) {
    x->nodes = grow(x->nodes, &x->cap, x->n, sizeof *x->nodes);
    struct exec_node *e = &x->nodes[x->n];
    memset(e, 0, sizeof *e);
    e->origin = origin;
    if (type == NODE_GRAPH || type == NODE_EMPTY) {
        e->op.type = NODE_EMPTY;
    } else {
        copy_operation(&e->op, origin);
        e->op.deps = NULL, e->op.ndeps = 0, e->op.deps_cap = 0;
    }
    e->preds = malloc((npreds + 1) * sizeof *e->preds);
    if (!e->preds) die("%s", "out of host memory");
    memcpy(e->preds, preds, npreds * sizeof *preds);
    e->npreds = npreds;
    return x->n++;
}

static int instantiate_bodies(struct exec_node *e);

/* Append `g`'s nodes to `x`, each after the exec nodes of its dependencies, the roots after `entry` (none when
   (size_t)-1); a child graph becomes an empty node, its nodes, and an empty node after its last ones. 0 when
   `g` or a child has a cycle. */
static int flatten(struct graph_exec *x, const struct graph *g, size_t entry) {
    struct node **order = malloc((g->n + 1) * sizeof *order);
    size_t *last = malloc((g->n + 1) * sizeof *last); /* per node of g (by index): the exec node that ends it */
    size_t *preds = NULL, npreds = 0, preds_cap = 0;
    if (!order || !last) die("%s", "out of host memory");
    int ok = topological(g, order);
    for (size_t i = 0; ok && i < g->n; i++) {
        const struct node *node = order[i];
        npreds = 0;
        if (!node->ndeps && entry != (size_t)-1) {
            preds = grow(preds, &preds_cap, npreds, sizeof *preds);
            preds[npreds++] = entry;
        }
        for (size_t d = 0; d < node->ndeps; d++) {
            preds = grow(preds, &preds_cap, npreds, sizeof *preds);
            preds[npreds++] = last[node->deps[d]->mark];
        }
        size_t at = add_exec_node(x, node, node->type, preds, npreds);
        if (node->type == NODE_CONDITIONAL) ok = instantiate_bodies(&x->nodes[at]);
        if (node->type == NODE_GRAPH) {
            size_t first = x->n;
            ok = flatten(x, node->child, at);
            npreds = 0;
            for (size_t c = first; ok && c < x->n; c++) {
                int depended = 0;
                for (size_t o = c + 1; o < x->n && !depended; o++)
                    for (size_t p = 0; p < x->nodes[o].npreds; p++) depended |= x->nodes[o].preds[p] == c;
                if (depended) continue;
                preds = grow(preds, &preds_cap, npreds, sizeof *preds);
                preds[npreds++] = c;
            }
            if (first == x->n) preds = grow(preds, &preds_cap, 0, sizeof *preds), preds[npreds++] = at;
            at = add_exec_node(x, node, NODE_EMPTY, preds, npreds);
        }
        last[node->mark] = at;
    }
    free(order);
    free(last);
    free(preds);
    return ok;
}

/* Whether issuing the node makes the host wait for its stream: a host node, or a copy into pageable host
   memory (which the server makes synchronous, as for cudaMemcpyAsync). */
static int host_waits(const struct node *op) {
    return op->type == NODE_HOST || (op->type == NODE_MEMCPY && !in_arena(device_side(op->copy.dst, 1)));
}

/* Which nodes nothing depends on, and the order replays issue nodes in: dependencies first, and a node the
   host waits for only once no other node is ready (see the top of this file). */
static void plan(struct graph_exec *x) {
    char *issued = calloc(x->n + 1, 1);
    x->order = malloc((x->n + 1) * sizeof *x->order);
    if (!issued || !x->order) die("%s", "out of host memory");
    for (size_t i = 0; i < x->n; i++) x->nodes[i].sink = 1;
    for (size_t i = 0; i < x->n; i++)
        for (size_t p = 0; p < x->nodes[i].npreds; p++) x->nodes[x->nodes[i].preds[p]].sink = 0;
    for (size_t done = 0; done < x->n;) {
        size_t pick = (size_t)-1;
        for (size_t i = 0; i < x->n; i++) {
            int ready = !issued[i];
            for (size_t p = 0; p < x->nodes[i].npreds && ready; p++) ready = issued[x->nodes[i].preds[p]];
            if (!ready) continue;
            if (!host_waits(&x->nodes[i].op)) { pick = i; break; }
            if (pick == (size_t)-1) pick = i;
        }
        issued[pick] = 1;
        x->order[done++] = pick;
    }
    free(issued);
}

static void destroy_exec(struct graph_exec *x);

static void free_exec_nodes(struct exec_node *nodes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(nodes[i].preds);
        for (unsigned b = 0; nodes[i].bodies && b < nodes[i].op.nbodies; b++)
            if (nodes[i].bodies[b]) destroy_exec(nodes[i].bodies[b]);
        free(nodes[i].bodies);
        free_operation(&nodes[i].op);
    }
    free(nodes);
}

/* The handles of `g` whose defaults each launch of `x` assigns (those made with cudaGraphCondAssignDefault). */
static void take_defaults(struct graph_exec *x, const struct graph *g) {
    x->ndefaults = 0;
    for (size_t i = 0; i < g->nhandles; i++)
        if (g->handles[i].flags & CONDITION_ASSIGN_DEFAULT)
            x->defaults = grow(x->defaults, &x->defaults_cap, x->ndefaults, sizeof *x->defaults),
            x->defaults[x->ndefaults++] = g->handles[i];
}

/* `g` instantiated, or NULL when it (or a graph in it) has a cycle. */
static struct graph_exec *instantiate(const struct graph *g, unsigned long long flags) {
    struct graph_exec *x = calloc(1, sizeof *x);
    if (!x) die("%s", "out of host memory");
    x->flags = flags;
    if (!flatten(x, g, (size_t)-1)) {
        free_exec_nodes(x->nodes, x->n);
        free(x);
        return NULL;
    }
    plan(x);
    take_defaults(x, g);
    return x;
}

/* A conditional exec node's body graphs, instantiated; 0 when one has a cycle. */
static int instantiate_bodies(struct exec_node *e) {
    e->bodies = calloc(e->op.nbodies + 1, sizeof *e->bodies);
    if (!e->bodies) die("%s", "out of host memory");
    for (unsigned b = 0; b < e->op.nbodies; b++)
        if (!(e->bodies[b] = instantiate(e->op.bodies[b], 0))) return 0;
    return 1;
}

EXPORT cudaError_t cudaGraphInstantiateWithFlags(struct graph_exec **pGraphExec, struct graph *graph,
                                                 unsigned long long flags) {
    if (!pGraphExec || !graph) return record(cudaErrorInvalidValue);
    if (flags & INSTANTIATE_DEVICE_LAUNCH) unsupported("cudaGraphInstantiate with cudaGraphInstantiateFlagDeviceLaunch", NULL);
    struct graph_exec *x = instantiate(graph, flags);
    if (!x) return record(cudaErrorInvalidValue);
    *pGraphExec = x;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphInstantiate(struct graph_exec **pGraphExec, struct graph *graph, unsigned long long flags) {
    return cudaGraphInstantiateWithFlags(pGraphExec, graph, flags);
}

static void destroy_exec(struct graph_exec *x) {
    for (size_t i = 0; i < x->n; i++) {
        if (x->nodes[i].stream) cudaStreamDestroy(x->nodes[i].stream);
        free(x->nodes[i].event);
    }
    free(x->start);
    free(x->done);
    free_exec_nodes(x->nodes, x->n);
    free(x->order);
    free(x->defaults);
    free(x);
}

EXPORT cudaError_t cudaGraphExecDestroy(struct graph_exec *graphExec) {
    if (!graphExec) return record(cudaErrorInvalidValue);
    destroy_exec(graphExec);
    return cudaSuccess;
}

/* The exec node that came from the graph's `node`. */
static struct exec_node *exec_node_of(struct graph_exec *x, const struct node *node, int type) {
    if (!x || !node) return NULL;
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].origin == node && x->nodes[i].op.type == type) return &x->nodes[i];
    return NULL;
}

EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(struct graph_exec *hGraphExec, struct node *node,
                                                    const struct cudaKernelNodeParams *pNodeParams) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_KERNEL);
    if (!e) return record(cudaErrorInvalidValue);
    return record(set_kernel_params(&e->op, pNodeParams));
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(struct graph_exec *hGraphExec, struct node *node,
                                                    const struct copy_3d_params *pNodeParams) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_MEMCPY);
    if (!e) return record(cudaErrorInvalidValue);
    return record(copy_from_3d(&e->op.copy, pNodeParams, "cudaGraphExecMemcpyNodeSetParams"));
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(struct graph_exec *hGraphExec, struct node *node, void *dst,
                                                      const void *src, size_t count, int kind) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_MEMCPY);
    if (!e) return record(cudaErrorInvalidValue);
    if (kind < cudaMemcpyHostToHost || kind > 4) return record(cudaErrorInvalidMemcpyDirection);
    copy_1d(&e->op.copy, dst, src, count, kind);
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(struct graph_exec *hGraphExec, struct node *node,
                                                    const struct cudaMemsetParams *pNodeParams) {
    struct exec_node *e = exec_node_of(hGraphExec, node, NODE_MEMSET);
    if (!e) return record(cudaErrorInvalidValue);
    return record(set_memset(&e->op, pNodeParams));
}

/* What an update of `x` with `fresh` (the new graph, instantiated) gives (UPDATE_*): UPDATE_SUCCESS when the
   two have the same node types, in the order the nodes were added, and edges, and their conditional nodes the
   same type and number of bodies (parameters that no update may change), their bodies alike in turn; `*bad`
   is then the new graph's node at fault. */
static int update_result(const struct graph_exec *x, const struct graph_exec *fresh, const struct node **bad) {
    if (fresh->n != x->n) return UPDATE_TOPOLOGY_CHANGED;
    for (size_t i = 0; i < fresh->n; i++) {
        const struct exec_node *old = &x->nodes[i], *now = &fresh->nodes[i];
        *bad = now->origin;
        if (old->op.type != now->op.type) return UPDATE_NODE_TYPE_CHANGED;
        if (old->npreds != now->npreds || memcmp(old->preds, now->preds, now->npreds * sizeof *now->preds))
            return UPDATE_TOPOLOGY_CHANGED;
        if (now->op.type != NODE_CONDITIONAL) continue;
        if (old->op.condition != now->op.condition || old->op.nbodies != now->op.nbodies) return UPDATE_PARAMETERS_CHANGED;
        for (unsigned b = 0; b < now->op.nbodies; b++) {
            int result = update_result(old->bodies[b], now->bodies[b], bad);
            if (result != UPDATE_SUCCESS) return result;
        }
    }
    *bad = NULL;
    return UPDATE_SUCCESS;
}

/* Swap the operations of `x` and `fresh`, conditional bodies included (update_result allowed it): `x` then has
   the new graph's parameters, and `fresh` the old ones, which go with it. */
static void swap_operations(struct graph_exec *x, struct graph_exec *fresh) {
    for (size_t i = 0; i < x->n; i++) {
        struct node op = x->nodes[i].op;
        x->nodes[i].op = fresh->nodes[i].op, fresh->nodes[i].op = op;
        for (unsigned b = 0; b < op.nbodies; b++) swap_operations(x->nodes[i].bodies[b], fresh->nodes[i].bodies[b]);
    }
}

/* Give the exec the parameters of `graph`'s nodes, when `graph` has the exec's topology (update_result), and
   its conditional handles' defaults and flags. A conditional node then reads the handle the new graph gives it. */
EXPORT cudaError_t cudaGraphExecUpdate(struct graph_exec *hGraphExec, struct graph *hGraph,
                                       cudaGraphExecUpdateResultInfo *resultInfo) {
    if (!hGraphExec || !hGraph || !resultInfo) return record(cudaErrorInvalidValue);
    struct graph_exec fresh = {0};
    const struct node *bad = NULL;
    int result = flatten(&fresh, hGraph, (size_t)-1) ? update_result(hGraphExec, &fresh, &bad) : UPDATE_TOPOLOGY_CHANGED;
    resultInfo->result = result;
    resultInfo->errorNode = (void *)bad;
    resultInfo->errorFromNode = NULL;
    if (result == UPDATE_SUCCESS) {
        swap_operations(hGraphExec, &fresh);
        take_defaults(hGraphExec, hGraph);
    }
    free_exec_nodes(fresh.nodes, fresh.n);
    return result == UPDATE_SUCCESS ? cudaSuccess : record(cudaErrorGraphExecUpdateFailure);
}

/* ------------------------------------------------------------------------ */
/* Launching a graph                                                         */
/* ------------------------------------------------------------------------ */

static cudaError_t allocate_in_graph(const struct node *op, void *stream);
static cudaError_t free_async(void *ptr, void *stream, const char *call);
static cudaError_t settle_graph_allocations(struct graph_exec *x, void *stream);
static cudaError_t run_conditional(struct exec_node *e);
static cudaError_t assign_defaults(const struct graph_exec *x);

static cudaError_t issue_node(struct exec_node *e) {
    struct node *op = &e->op;
    struct copy_params *c = &op->copy;
    cudaError_t status = cudaSuccess;
    if (e->disabled) return cudaSuccess;
    replay_site = &op->site;
    switch (op->type) {
    case NODE_KERNEL:
        launch_site = op->site;
        status = cudaLaunchKernel(op->func, op->grid, op->block, op->argv, op->shared, e->stream);
        break;
    case NODE_MEMCPY:
        if (c->height == 1 && c->depth == 1)
            status = copy(c->dst, c->src, c->width, c->kind, e->stream, ASYNC, op->call);
        for (size_t z = 0; (c->height != 1 || c->depth != 1) && z < c->depth && status == cudaSuccess; z++)
            status = copy_2d(c->dst + z * c->dslice, c->dpitch, c->src + z * c->sslice, c->spitch, c->width, c->height,
                             c->kind, e->stream, ASYNC, op->call);
        break;
    case NODE_MEMSET:
        status = fill(op->dst, op->pitch, op->value, op->width, op->height, e->stream, ASYNC, op->call);
        break;
    case NODE_HOST:
        status = cudaLaunchHostFunc(e->stream, op->fn, op->data);
        break;
    case NODE_EVENT_RECORD:
        status = handles(OP_EVENT_RECORD, op->event, e->stream);
        break;
    case NODE_WAIT_EVENT:
        status = handles(OP_STREAM_WAIT_EVENT, e->stream, op->event);
        break;
    case NODE_MEM_ALLOC:
        status = allocate_in_graph(op, e->stream);
        break;
    case NODE_MEM_FREE:
        status = free_async(op->address, e->stream, op->call);
        break;
    case NODE_CONDITIONAL:
        status = run_conditional(e);
        break;
    }
    replay_site = NULL;
    return status;
}

/* A non-blocking stream of the runtime's own, for one node of an instantiated graph. */
static cudaError_t create_node_stream(void **stream) {
    void *handle = malloc(1); /* a unique, opaque handle, as cudaStreamCreate's */
    struct buf b = {0};
    put_u64(&b, (uintptr_t)handle);
    put_u32(&b, STREAM_NON_BLOCKING | GRAPH_NODE_STREAM);
    cudaError_t status = request(OP_STREAM_CREATE, &b, NULL);
    if (status != cudaSuccess) free(handle);
    else *stream = handle;
    return status;
}

static cudaError_t replay(struct graph_exec *x, void *stream) {
    if (!x->start) {
        for (size_t i = 0; i < x->n; i++) {
            cudaError_t status = create_node_stream(&x->nodes[i].stream);
            if (status != cudaSuccess) return status;
            x->nodes[i].event = malloc(1);
        }
        x->start = malloc(1), x->done = malloc(1);
    }
    cudaError_t status = handles(OP_EVENT_RECORD, x->start, stream);
    for (size_t k = 0; k < x->n && status == cudaSuccess; k++) {
        struct exec_node *e = &x->nodes[x->order[k]];
        if (!e->npreds) status = handles(OP_STREAM_WAIT_EVENT, e->stream, x->start);
        if (!e->npreds && x->launched && status == cudaSuccess) status = handles(OP_STREAM_WAIT_EVENT, e->stream, x->done);
        for (size_t p = 0; p < e->npreds && status == cudaSuccess; p++)
            status = handles(OP_STREAM_WAIT_EVENT, e->stream, x->nodes[e->preds[p]].event);
        if (status == cudaSuccess) status = issue_node(e);
        if (status == cudaSuccess) status = handles(OP_EVENT_RECORD, e->event, e->stream);
    }
    for (size_t i = 0; i < x->n && status == cudaSuccess; i++)
        if (x->nodes[i].sink) status = handles(OP_STREAM_WAIT_EVENT, stream, x->nodes[i].event);
    if (status == cudaSuccess) status = handles(OP_EVENT_RECORD, x->done, stream);
    x->launched = 1;
    return status;
}

static int is_capturing(void *stream);

EXPORT cudaError_t cudaGraphLaunch(struct graph_exec *graphExec, void *stream) {
    if (!graphExec) return record(cudaErrorInvalidValue);
    if (rt.sticky) return rt.sticky;
    if (__atomic_load_n(&captures, __ATOMIC_ACQUIRE) && is_capturing(stream))
        unsupported("cudaGraphLaunch into a capturing stream", NULL);
    cudaError_t status = settle_graph_allocations(graphExec, stream);
    if (status == cudaSuccess) status = assign_defaults(graphExec);
    if (status == cudaSuccess) status = replay(graphExec, stream);
    /* A node that faults fails the launch as a kernel launch fails: later, at the next synchronising call. */
    if (is_sticky(status)) return record(status), cudaSuccess;
    return record(status);
}

/* There is no device memory to upload the graph to: it is checked, as a GPU's runtime does, and ready. */
EXPORT cudaError_t cudaGraphUpload(struct graph_exec *graphExec, void *stream) {
    (void)stream;
    return graphExec ? cudaSuccess : record(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaGraphLaunch_ptsz(struct graph_exec *graphExec, void *stream) {
    return cudaGraphLaunch(graphExec, PER_THREAD(stream));
}

EXPORT cudaError_t cudaGraphUpload_ptsz(struct graph_exec *graphExec, void *stream) {
    return cudaGraphUpload(graphExec, PER_THREAD(stream));
}

/* ------------------------------------------------------------------------ */
/* Stream capture                                                            */
/* ------------------------------------------------------------------------ */

static int is_legacy(const void *stream) { return stream == LEGACY_STREAM || stream == (void *)1; }

/* The capture state of `stream`, or NULL. Callers hold graph_lock. */
static struct capturing_stream *capturing_of(const void *stream) {
    for (size_t i = 0; i < ncapturing; i++)
        if (capturing_streams[i].stream == stream) return &capturing_streams[i];
    return NULL;
}

static struct captured_event *captured_event_of(const void *event) {
    for (size_t i = 0; i < ncaptured_events; i++)
        if (captured_events[i].event == event) return &captured_events[i];
    return NULL;
}

static void forget_event(struct captured_event *e) {
    free(e->deps);
    *e = captured_events[--ncaptured_events];
}

static int is_capturing(void *stream) {
    pthread_mutex_lock(&graph_lock);
    int yes = capturing_of(stream) != NULL;
    pthread_mutex_unlock(&graph_lock);
    return yes;
}

static struct capturing_stream *join_capture(void *stream, struct capture *c) {
    capturing_streams = grow(capturing_streams, &capturing_cap, ncapturing, sizeof *capturing_streams);
    struct capturing_stream *s = &capturing_streams[ncapturing++];
    *s = (struct capturing_stream){.stream = stream, .capture = c};
    return s;
}

/* End capture `c`: its streams capture no more, and its events are ordinary ones again. Callers hold graph_lock. */
static void end_capture(struct capture *c) {
    for (size_t i = 0; i < ncapturing;)
        if (capturing_streams[i].capture == c) {
            free(capturing_streams[i].deps);
            capturing_streams[i] = capturing_streams[--ncapturing];
        } else {
            i++;
        }
    for (size_t i = 0; i < ncaptured_events;)
        if (captured_events[i].capture == c) forget_event(&captured_events[i]);
        else i++;
    __atomic_sub_fetch(&captures, 1, __ATOMIC_RELEASE);
    free(c);
}

/* Whether this thread may not make a potentially unsafe call now (cudaThreadExchangeStreamCaptureMode), and
   the captures such a call invalidates. Callers hold graph_lock. */
static int invalidate_for_unsafe_call(void) {
    int found = 0;
    if (thread_capture_mode == MODE_RELAXED) return 0;
    for (size_t i = 0; i < ncapturing; i++) {
        struct capture *c = capturing_streams[i].capture;
        int mine = pthread_equal(c->thread, pthread_self()) && c->mode != MODE_RELAXED;
        int global = c->mode == MODE_GLOBAL && thread_capture_mode == MODE_GLOBAL;
        if (mine || global) c->status = CAPTURE_INVALIDATED, found = 1;
    }
    return found;
}

/* A new node for work issued to a capturing stream `s`, after the stream's dependencies; it becomes them. */
static struct node *capture_node(struct capturing_stream *s, int type, const char *call, const struct stack *site) {
    struct stack here;
    if (!site) capture(&here), site = &here;
    struct node *node = add_node(s->capture->graph, type, s->deps, s->ndeps, call, site);
    s->ndeps = 0;
    s->deps = add_unique(s->deps, &s->ndeps, &s->cap, node);
    return node;
}

/* Work on the legacy stream, which would wait for (or make wait) every blocking stream: an error that
   invalidates their captures when some capture. Callers hold graph_lock. */
static cudaError_t legacy_stream_work(void) {
    int found = 0;
    for (size_t i = 0; i < ncapturing; i++)
        if (blocking_stream(capturing_streams[i].stream)) capturing_streams[i].capture->status = CAPTURE_INVALIDATED, found = 1;
    return found ? cudaErrorStreamCaptureImplicit : NOT_CAPTURED;
}

/* The state of `stream`'s capture for work issued to it: NOT_CAPTURED when it does not capture, the error
   when its capture was invalidated, cudaSuccess when the work is to become a node. Callers hold graph_lock. */
static cudaError_t capture_target(void *stream, struct capturing_stream **out) {
    *out = capturing_of(stream);
    if (!*out) return is_legacy(stream) ? legacy_stream_work() : NOT_CAPTURED;
    return (*out)->capture->status == CAPTURE_INVALIDATED ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
}

static cudaError_t capture_launch(const void *func, dim3 grid, dim3 block, void **args, size_t shared, void *stream,
                                  const struct stack *site) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    if (status == cudaSuccess) {
        struct node probe = {0};
        status = set_kernel(&probe, func, grid, block, shared, args, NULL);
        if (status == cudaSuccess) {
            struct node *node = capture_node(s, NODE_KERNEL, "kernel launch", site);
            node->func = func, node->grid = grid, node->block = block, node->shared = shared;
            node->args = probe.args, node->argv = probe.argv;
        }
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* A synchronous call (cudaMemcpy, cudaMemset, ...) while captures are in progress: refused when its stream
   captures, or when this thread may not make unsafe calls now. Callers hold graph_lock. */
static cudaError_t synchronous_call(void *stream) {
    struct capturing_stream *s = capturing_of(stream);
    if (s) {
        s->capture->status = CAPTURE_INVALIDATED;
        return cudaErrorStreamCaptureUnsupported;
    }
    cudaError_t status = is_legacy(stream) ? legacy_stream_work() : NOT_CAPTURED;
    if (status == NOT_CAPTURED && invalidate_for_unsafe_call()) status = cudaErrorStreamCaptureUnsupported;
    return status;
}

/* cudaMalloc, cudaFree and the like: not work of a stream, so not captured, and unsafe during a capture. */
static cudaError_t capture_unsafe_call(void) {
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = invalidate_for_unsafe_call() ? cudaErrorStreamCaptureUnsupported : NOT_CAPTURED;
    pthread_mutex_unlock(&graph_lock);
    return status;
}

static cudaError_t capture_copy(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                                int kind, void *stream, int async, const char *call) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = async == SYNC ? synchronous_call(stream) : capture_target(stream, &s);
    if (async == ASYNC && status == cudaSuccess) {
        if (kind < cudaMemcpyHostToHost || kind > 4) {
            status = cudaErrorInvalidMemcpyDirection;
        } else {
            struct node *node = capture_node(s, NODE_MEMCPY, call, NULL);
            node->copy = (struct copy_params){.dst = dst, .src = src, .dpitch = dpitch, .spitch = spitch,
                                              .width = width, .height = height, .depth = 1, .kind = kind};
        }
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

static cudaError_t capture_fill(void *dst, size_t pitch, int value, size_t width, size_t height, void *stream,
                                int async, const char *call) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = async == SYNC ? synchronous_call(stream) : capture_target(stream, &s);
    if (async == ASYNC && status == cudaSuccess) {
        struct node *node = capture_node(s, NODE_MEMSET, call, NULL);
        node->dst = dst, node->pitch = pitch, node->value = value, node->width = width, node->height = height;
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

static cudaError_t capture_host_function(void *stream, void (*fn)(void *), void *data) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    if (status == cudaSuccess) {
        struct node *node = capture_node(s, NODE_HOST, "cudaLaunchHostFunc", NULL);
        node->fn = fn, node->data = data;
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* cudaEventRecord: on a capturing stream the event marks the stream's place in the capture (no node). */
static cudaError_t capture_event_record(void *event, void *stream) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    struct captured_event *e = captured_event_of(event);
    if (status == NOT_CAPTURED && e) forget_event(e); /* recorded outside any capture now */
    if (status == cudaSuccess) {
        if (!e) {
            captured_events = grow(captured_events, &captured_events_cap, ncaptured_events, sizeof *captured_events);
            e = &captured_events[ncaptured_events++];
            *e = (struct captured_event){.event = event};
        }
        e->capture = s->capture;
        e->ndeps = 0;
        for (size_t i = 0; i < s->ndeps; i++) e->deps = add_unique(e->deps, &e->ndeps, &e->cap, s->deps[i]);
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* cudaEventRecordWithFlags with cudaEventRecordExternal on a capturing stream: an event record node. */
static cudaError_t capture_external_record(void *event, void *stream, unsigned int flags) {
    struct capturing_stream *s;
    if (!(flags & EVENT_EXTERNAL)) return NOT_CAPTURED;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    if (status == cudaSuccess) capture_node(s, NODE_EVENT_RECORD, "cudaEventRecordWithFlags", NULL)->event = event;
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* cudaStreamWaitEvent: an event recorded in a capture makes the stream (join the capture and) depend on the
   nodes before it; a capturing stream cannot wait for work outside its capture, but with cudaEventWaitExternal
   (an event wait node). */
static cudaError_t capture_stream_wait(void *stream, void *event, unsigned int flags) {
    struct capturing_stream *s;
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = capture_target(stream, &s);
    struct captured_event *e = captured_event_of(event);
    if (status == cudaSuccess && (flags & EVENT_EXTERNAL)) {
        capture_node(s, NODE_WAIT_EVENT, "cudaStreamWaitEvent", NULL)->event = event;
        e = NULL; /* an edge to work outside the capture, through the node: nothing more to join */
    } else if (e && status == NOT_CAPTURED) {
        if (is_legacy(stream)) {
            e->capture->status = CAPTURE_INVALIDATED;
            status = cudaErrorStreamCaptureImplicit;
        } else {
            s = join_capture(stream, e->capture);
            status = cudaSuccess;
        }
    } else if (status == cudaSuccess && (!e || e->capture != s->capture)) {
        s->capture->status = CAPTURE_INVALIDATED;
        if (e) e->capture->status = CAPTURE_INVALIDATED;
        status = cudaErrorStreamCaptureIsolation;
    }
    if (status == cudaSuccess && e && e->capture->status == CAPTURE_INVALIDATED) status = cudaErrorStreamCaptureInvalidated;
    if (status == cudaSuccess && e)
        for (size_t i = 0; i < e->ndeps; i++) s->deps = add_unique(s->deps, &s->ndeps, &s->cap, e->deps[i]);
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* cudaStreamSynchronize/Query of a capturing stream, cudaDeviceSynchronize, cudaEventSynchronize/Query while
   captures are in progress. */
static cudaError_t capture_wait_for(uint32_t what, const void *handle) {
    cudaError_t status = NOT_CAPTURED;
    pthread_mutex_lock(&graph_lock);
    if (what == WAIT_EVENT) {
        if (captured_event_of(handle)) status = cudaErrorCapturedEvent;
    } else if (what == WAIT_DEVICE || is_legacy(handle) || capturing_of(handle)) {
        status = synchronous_call((void *)handle);
    }
    pthread_mutex_unlock(&graph_lock);
    return status;
}

/* Start capturing `stream` into `graph` (a new graph when NULL), its first work after `deps` (nodes of `graph`). */
static cudaError_t begin_capture(void *stream, int mode, struct graph *graph, struct node *const *deps, size_t ndeps) {
    if (mode < MODE_GLOBAL || mode > MODE_RELAXED || (ndeps && !deps)) return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < ndeps; i++)
        if (!deps[i] || deps[i]->graph != graph || !in_graph(graph, deps[i])) return record(cudaErrorInvalidValue);
    if (is_legacy(stream)) return record(cudaErrorStreamCaptureUnsupported);
    pthread_mutex_lock(&graph_lock);
    cudaError_t status = cudaSuccess;
    if (capturing_of(stream)) {
        status = cudaErrorIllegalState;
    } else {
        struct capture *c = calloc(1, sizeof *c);
        if (!c) die("%s", "out of host memory");
        *c = (struct capture){.id = ++last_capture_id, .graph = graph ? graph : new_graph(), .to_graph = graph != NULL,
                              .origin = stream, .mode = mode, .status = CAPTURE_ACTIVE, .thread = pthread_self()};
        struct capturing_stream *s = join_capture(stream, c);
        for (size_t i = 0; i < ndeps; i++) s->deps = add_unique(s->deps, &s->ndeps, &s->cap, deps[i]);
        __atomic_add_fetch(&captures, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&graph_lock);
    return record(status);
}

EXPORT cudaError_t cudaStreamBeginCapture(void *stream, int mode) { return begin_capture(stream, mode, NULL, NULL, 0); }

EXPORT cudaError_t cudaStreamBeginCaptureToGraph(void *stream, struct graph *graph, struct node *const *dependencies,
                                                 const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                 int mode) {
    refuse_edge_data(dependencyData, numDependencies, "cudaStreamBeginCaptureToGraph");
    if (!graph) return record(cudaErrorInvalidValue);
    return begin_capture(stream, mode, graph, dependencies, numDependencies);
}

EXPORT cudaError_t cudaStreamBeginCaptureToGraph_ptsz(void *stream, struct graph *graph, struct node *const *dependencies,
                                                      const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                      int mode) {
    return cudaStreamBeginCaptureToGraph(PER_THREAD(stream), graph, dependencies, dependencyData, numDependencies, mode);
}

enum { CAPTURE_ADD_DEPENDENCIES = 0, CAPTURE_SET_DEPENDENCIES = 1 };

/* The nodes the capturing stream's next work depends on: `dependencies` (nodes of its capture's graph) added to
   them, or in their place. */
EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(void *stream, struct node **dependencies,
                                                       const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                       unsigned int flags) {
    refuse_edge_data(dependencyData, numDependencies, "cudaStreamUpdateCaptureDependencies");
    if ((numDependencies && !dependencies) || flags > CAPTURE_SET_DEPENDENCIES) return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&graph_lock);
    struct capturing_stream *s = capturing_of(stream);
    cudaError_t status = s ? cudaSuccess : cudaErrorIllegalState;
    for (size_t i = 0; s && i < numDependencies && status == cudaSuccess; i++)
        if (!dependencies[i] || !in_graph(s->capture->graph, dependencies[i])) status = cudaErrorInvalidValue;
    if (status == cudaSuccess) {
        if (flags == CAPTURE_SET_DEPENDENCIES) s->ndeps = 0;
        for (size_t i = 0; i < numDependencies; i++) s->deps = add_unique(s->deps, &s->ndeps, &s->cap, dependencies[i]);
    }
    pthread_mutex_unlock(&graph_lock);
    return record(status);
}

EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(void *stream, struct node **dependencies,
                                                            const cudaGraphEdgeData *dependencyData,
                                                            size_t numDependencies, unsigned int flags) {
    return cudaStreamUpdateCaptureDependencies(PER_THREAD(stream), dependencies, dependencyData, numDependencies, flags);
}

/* Mark (`mark` 1) the nodes of `g` that are among `targets` or come before one of them; the others get 0. */
static void mark_ancestors(const struct graph *g, struct node *const *targets, size_t n) {
    struct node **todo = malloc((g->n + n + 1) * sizeof *todo);
    size_t ntodo = 0;
    if (!todo) die("%s", "out of host memory");
    for (size_t i = 0; i < g->n; i++) g->nodes[i]->mark = 0;
    for (size_t i = 0; i < n; i++) targets[i]->mark = 1, todo[ntodo++] = targets[i];
    while (ntodo) {
        struct node *node = todo[--ntodo];
        for (size_t d = 0; d < node->ndeps; d++)
            if (!node->deps[d]->mark) node->deps[d]->mark = 1, todo[ntodo++] = node->deps[d];
    }
    free(todo);
}

/* A capture into the program's graph (cudaStreamBeginCaptureToGraph) needs no `pGraph`, and leaves the graph to
   the program when it fails. */
EXPORT cudaError_t cudaStreamEndCapture(void *stream, struct graph **pGraph) {
    pthread_mutex_lock(&graph_lock);
    struct capturing_stream *s = capturing_of(stream);
    cudaError_t status = cudaSuccess;
    if (!pGraph && !(s && s->capture->to_graph)) {
        status = cudaErrorInvalidValue;
    } else if (!s) {
        status = cudaErrorIllegalState;
    } else if (s->capture->origin != stream) {
        s->capture->status = CAPTURE_INVALIDATED;
        status = cudaErrorStreamCaptureUnmatched;
    } else if (s->capture->mode != MODE_RELAXED && !pthread_equal(s->capture->thread, pthread_self())) {
        status = cudaErrorStreamCaptureWrongThread;
    } else {
        struct capture *c = s->capture;
        if (c->status == CAPTURE_INVALIDATED) status = cudaErrorStreamCaptureInvalidated;
        mark_ancestors(c->graph, s->deps, s->ndeps);
        for (size_t i = 0; i < ncapturing && status == cudaSuccess; i++) {
            struct capturing_stream *other = &capturing_streams[i];
            if (other->capture != c || other == s) continue;
            for (size_t d = 0; d < other->ndeps && status == cudaSuccess; d++)
                if (!other->deps[d]->mark) status = cudaErrorStreamCaptureUnjoined; /* work the origin never waited for */
        }
        if (pGraph) *pGraph = status == cudaSuccess ? c->graph : NULL;
        if (status != cudaSuccess && !c->to_graph) destroy_graph(c->graph);
        end_capture(c);
    }
    pthread_mutex_unlock(&graph_lock);
    return record(status);
}

EXPORT cudaError_t cudaStreamIsCapturing(void *stream, int *pCaptureStatus) {
    if (!pCaptureStatus) return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&graph_lock);
    struct capturing_stream *s = capturing_of(stream);
    *pCaptureStatus = s ? s->capture->status : CAPTURE_NONE;
    pthread_mutex_unlock(&graph_lock);
    return cudaSuccess;
}

/* The dependencies it returns stay valid until the next call about captures, as NVIDIA's runtime says. */
EXPORT cudaError_t cudaStreamGetCaptureInfo(void *stream, int *captureStatus_out, unsigned long long *id_out,
                                            struct graph **graph_out, struct node *const **dependencies_out,
                                            const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out) {
    static __thread cudaGraphEdgeData *no_edge_data; /* all-default edge data, one per dependency */
    static __thread size_t no_edge_data_cap;
    if (!captureStatus_out) return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&graph_lock);
    struct capturing_stream *s = capturing_of(stream);
    *captureStatus_out = s ? s->capture->status : CAPTURE_NONE;
    if (s && id_out) *id_out = s->capture->id;
    if (s && graph_out) *graph_out = s->capture->graph;
    if (s && dependencies_out) *dependencies_out = s->deps;
    if (s && numDependencies_out) *numDependencies_out = s->ndeps;
    if (s && edgeData_out) {
        no_edge_data = grow(no_edge_data, &no_edge_data_cap, s->ndeps, sizeof *no_edge_data);
        memset(no_edge_data, 0, no_edge_data_cap * sizeof *no_edge_data);
        *edgeData_out = no_edge_data;
    }
    pthread_mutex_unlock(&graph_lock);
    return cudaSuccess;
}

EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode) {
    if (!mode || *mode < MODE_GLOBAL || *mode > MODE_RELAXED) return record(cudaErrorInvalidValue);
    int previous = thread_capture_mode;
    thread_capture_mode = *mode;
    *mode = previous;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamBeginCapture_ptsz(void *stream, int mode) {
    return cudaStreamBeginCapture(PER_THREAD(stream), mode);
}

EXPORT cudaError_t cudaStreamEndCapture_ptsz(void *stream, struct graph **pGraph) {
    return cudaStreamEndCapture(PER_THREAD(stream), pGraph);
}

EXPORT cudaError_t cudaStreamIsCapturing_ptsz(void *stream, int *pCaptureStatus) {
    return cudaStreamIsCapturing(PER_THREAD(stream), pCaptureStatus);
}

EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(void *stream, int *captureStatus_out, unsigned long long *id_out,
                                                 struct graph **graph_out, struct node *const **dependencies_out,
                                                 const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out) {
    return cudaStreamGetCaptureInfo(PER_THREAD(stream), captureStatus_out, id_out, graph_out, dependencies_out,
                                    edgeData_out, numDependencies_out);
}
