/* Stream-ordered allocation (cudaMallocAsync, cudaFreeAsync) and memory pools, included by cudart.c after
 * graph_memory.h.
 *
 * Every call runs to completion before it returns, in the order the program makes them, so the stream's earlier
 * work is done when an allocation or free arrives: cudaMallocAsync allocates at once (as cudaMalloc, from the
 * same arena), and cudaFreeAsync frees at once without waiting for the device as cudaFree does. What the stream
 * order means for races is kept: the free is an operation of its stream that writes the whole allocation, so a
 * kernel or copy of another stream that the program did not order before it races with it (a use in stream
 * order after the free is a use-after-free, as for any freed memory). On a capturing stream both become memory
 * nodes of the capture's graph (graph_memory.h).
 *
 * Pools: the device's default pool and those cudaMemPoolCreate makes (pinned memory of the one device; a pool
 * in host memory stops the program), each with its attributes, its maximum size (an allocation past it fails
 * with cudaErrorMemoryAllocation) and the usage attributes, which report the bytes of the pool's live
 * allocations. cudaDeviceSetMemPool chooses the pool cudaMallocAsync allocates from. Memory is given back when
 * freed, so trimming has nothing to do. The one device always has read-write access to every pool, and no other
 * device exists (cudaMemPoolSetAccess/GetAccess with another device: cudaErrorInvalidDevice). A pool destroyed
 * while allocations from it are live goes once the last is freed, as NVIDIA documents. IPC export and import
 * stop the program (they need other processes).
 */

enum {
    POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    POOL_REUSE_ALLOW_OPPORTUNISTIC = 2,
    POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
    POOL_RELEASE_THRESHOLD = 4,
    POOL_RESERVED_MEM_CURRENT = 5,
    POOL_RESERVED_MEM_HIGH = 6,
    POOL_USED_MEM_CURRENT = 7,
    POOL_USED_MEM_HIGH = 8,
};

/* A pool; its handle (cudaMemPool_t) is its address. */
struct mem_pool {
    struct mem_pool_props props;
    int reuse[3];               /* the three cudaMemPoolReuse* flags, all 1 by default as on a GPU */
    uint64_t release_threshold; /* 0 by default */
    uint64_t used, used_high;   /* bytes of live allocations from the pool, and their high-water mark */
    size_t live;                /* live allocations from the pool */
    int destroyed;              /* cudaMemPoolDestroy came while allocations were live */
};

static struct mem_pool default_pool = {.props = {.allocType = MEM_ALLOCATION_PINNED, .location = {MEM_LOCATION_DEVICE, 0}},
                                       .reuse = {1, 1, 1}};
static struct mem_pool *current_pool = &default_pool; /* cudaDeviceSetMemPool's */
static struct mem_pool **created_pools;               /* guarded by rt.lock, as everything below */
static size_t ncreated_pools, created_pools_cap;

struct pool_allocation {
    uintptr_t address;
    size_t size;
    struct mem_pool *pool;
};
static struct pool_allocation *pool_allocations;
static size_t npool_allocations, pool_allocations_cap;

/* Whether `pool` is a pool the program may use. Callers hold rt.lock. */
static int valid_pool(const struct mem_pool *pool) {
    if (pool == &default_pool) return 1;
    for (size_t i = 0; i < ncreated_pools; i++)
        if (created_pools[i] == pool) return !pool->destroyed;
    return 0;
}

static int known_pool(struct mem_pool *pool) {
    pthread_mutex_lock(&rt.lock);
    int valid = valid_pool(pool);
    pthread_mutex_unlock(&rt.lock);
    return valid;
}

/* Free a created pool's state. Callers hold rt.lock. */
static void drop_pool(struct mem_pool *pool) {
    for (size_t i = 0; i < ncreated_pools; i++)
        if (created_pools[i] == pool) created_pools[i] = created_pools[--ncreated_pools];
    if (current_pool == pool) current_pool = &default_pool;
    free(pool);
}

static cudaError_t allocate_async(void **ptr, size_t size, struct mem_pool *pool, void *stream, const char *call) {
    if (!ptr || !known_pool(pool)) return record(cudaErrorInvalidValue);
    CAPTURE_HOOK(capture_allocation(ptr, size, stream, call));
    if (pool->props.maxSize && size > pool->props.maxSize - pool->used) return record(cudaErrorMemoryAllocation);
    cudaError_t status = allocate(ptr, size, KIND_DEVICE, 0, call);
    if (status != cudaSuccess || !*ptr) return status;
    pthread_mutex_lock(&rt.lock);
    pool_allocations = grow(pool_allocations, &pool_allocations_cap, npool_allocations, sizeof *pool_allocations);
    pool_allocations[npool_allocations++] = (struct pool_allocation){(uintptr_t)*ptr, size, pool};
    pool->used += size, pool->live++;
    if (pool->used > pool->used_high) pool->used_high = pool->used;
    pthread_mutex_unlock(&rt.lock);
    return cudaSuccess;
}

/* `address` was freed (by cudaFreeAsync, or by cudaFree, which frees pool memory too): its pool no longer holds
   it, and a destroyed pool goes with its last allocation. */
static void forget_pool_allocation(uintptr_t address) {
    pthread_mutex_lock(&rt.lock);
    for (size_t i = 0; i < npool_allocations; i++)
        if (pool_allocations[i].address == address) {
            struct mem_pool *pool = pool_allocations[i].pool;
            pool->used -= pool_allocations[i].size, pool->live--;
            if (pool->destroyed && !pool->live) drop_pool(pool);
            pool_allocations[i] = pool_allocations[--npool_allocations];
            break;
        }
    pthread_mutex_unlock(&rt.lock);
}

static cudaError_t free_async(void *ptr, void *stream, const char *call) {
    if (rt.sticky) return rt.sticky;
    CAPTURE_HOOK(capture_free(ptr, stream, call));
    if (!ptr) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)ptr);
    put_u64(&b, (uintptr_t)stream);
    put_site(&b, call, NULL);
    cudaError_t status = record(request(OP_FREE_ASYNC, &b, NULL));
    if (status == cudaSuccess) forget_pool_allocation((uintptr_t)ptr);
    return status;
}

static struct mem_pool *pool_in_use(void) {
    pthread_mutex_lock(&rt.lock);
    struct mem_pool *pool = current_pool;
    pthread_mutex_unlock(&rt.lock);
    return pool;
}

EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, void *stream) {
    return allocate_async(devPtr, size, pool_in_use(), stream, "cudaMallocAsync");
}

EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, void *stream) {
    return allocate_async(devPtr, size, pool_in_use(), PER_THREAD(stream), "cudaMallocAsync");
}

EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, void *memPool, void *stream) {
    return allocate_async(ptr, size, memPool, stream, "cudaMallocFromPoolAsync");
}

EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, void *memPool, void *stream) {
    return allocate_async(ptr, size, memPool, PER_THREAD(stream), "cudaMallocFromPoolAsync");
}

EXPORT cudaError_t cudaFreeAsync(void *devPtr, void *stream) { return free_async(devPtr, stream, "cudaFreeAsync"); }

EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, void *stream) {
    return free_async(devPtr, PER_THREAD(stream), "cudaFreeAsync");
}

EXPORT cudaError_t cudaDeviceGetDefaultMemPool(void **memPool, int device) {
    if (!memPool) return record(cudaErrorInvalidValue);
    if (device != 0) return record(cudaErrorInvalidDevice);
    *memPool = &default_pool;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetMemPool(void **memPool, int device) {
    if (!memPool) return record(cudaErrorInvalidValue);
    if (device != 0) return record(cudaErrorInvalidDevice);
    *memPool = pool_in_use();
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceSetMemPool(int device, void *memPool) {
    if (device != 0) return record(cudaErrorInvalidDevice);
    pthread_mutex_lock(&rt.lock);
    int valid = valid_pool(memPool);
    if (valid) current_pool = memPool;
    pthread_mutex_unlock(&rt.lock);
    return valid ? cudaSuccess : record(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaMemPoolCreate(void **memPool, const struct mem_pool_props *poolProps) {
    if (!memPool || !poolProps || poolProps->allocType != MEM_ALLOCATION_PINNED) return record(cudaErrorInvalidValue);
    int where = poolProps->location.type;
    if (where == MEM_LOCATION_HOST || where == MEM_LOCATION_HOST_NUMA || where == MEM_LOCATION_HOST_NUMA_CURRENT)
        unsupported("cudaMemPoolCreate of a pool in host memory", NULL);
    if (where != MEM_LOCATION_DEVICE) return record(cudaErrorInvalidValue);
    if (poolProps->location.id != 0) return record(cudaErrorInvalidDevice);
    struct mem_pool *pool = calloc(1, sizeof *pool);
    if (!pool) die("%s", "out of host memory");
    *pool = (struct mem_pool){.props = *poolProps, .reuse = {1, 1, 1}};
    pthread_mutex_lock(&rt.lock);
    created_pools = grow(created_pools, &created_pools_cap, ncreated_pools, sizeof *created_pools);
    created_pools[ncreated_pools++] = pool;
    pthread_mutex_unlock(&rt.lock);
    *memPool = pool;
    return cudaSuccess;
}

/* The default pool cannot be destroyed; a pool in use as the device's current one is replaced by the default. */
EXPORT cudaError_t cudaMemPoolDestroy(void *memPool) {
    struct mem_pool *pool = memPool;
    pthread_mutex_lock(&rt.lock);
    int valid = pool != &default_pool && valid_pool(pool);
    if (valid && pool->live) {
        pool->destroyed = 1;
        if (current_pool == pool) current_pool = &default_pool;
    } else if (valid) {
        drop_pool(pool);
    }
    pthread_mutex_unlock(&rt.lock);
    return valid ? cudaSuccess : record(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaMemPoolSetAccess(void *memPool, const struct mem_access_desc *descList, size_t count) {
    if (!known_pool(memPool) || (count && !descList)) return record(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++) {
        if (descList[i].location.type != MEM_LOCATION_DEVICE) return record(cudaErrorInvalidValue);
        if (descList[i].location.id != 0) return record(cudaErrorInvalidDevice);
        if (descList[i].flags != MEM_ACCESS_READ_WRITE) return record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemPoolGetAccess(int *flags, void *memPool, struct mem_location *location) {
    if (!flags || !location || !known_pool(memPool) || location->type != MEM_LOCATION_DEVICE)
        return record(cudaErrorInvalidValue);
    if (location->id != 0) return record(cudaErrorInvalidDevice);
    *flags = MEM_ACCESS_READ_WRITE;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemPoolSetAttribute(void *memPool, int attr, void *value) {
    struct mem_pool *pool = memPool;
    if (!known_pool(pool) || !value) return record(cudaErrorInvalidValue);
    switch (attr) {
    case POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case POOL_REUSE_ALLOW_OPPORTUNISTIC:
    case POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: pool->reuse[attr - 1] = *(int *)value != 0; break;
    case POOL_RELEASE_THRESHOLD: pool->release_threshold = *(uint64_t *)value; break;
    /* The high-water marks may only be reset to 0, which sets them to the current usage. */
    case POOL_RESERVED_MEM_HIGH:
    case POOL_USED_MEM_HIGH:
        if (*(uint64_t *)value != 0) return record(cudaErrorInvalidValue);
        pthread_mutex_lock(&rt.lock);
        pool->used_high = pool->used;
        pthread_mutex_unlock(&rt.lock);
        break;
    default: return record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

/* Memory is reserved exactly as it is used (freed memory goes back at once): reserved and used are the same. */
EXPORT cudaError_t cudaMemPoolGetAttribute(void *memPool, int attr, void *value) {
    struct mem_pool *pool = memPool;
    if (!known_pool(pool) || !value) return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    switch (attr) {
    case POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case POOL_REUSE_ALLOW_OPPORTUNISTIC:
    case POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)value = pool->reuse[attr - 1]; break;
    case POOL_RELEASE_THRESHOLD: *(uint64_t *)value = pool->release_threshold; break;
    case POOL_RESERVED_MEM_CURRENT:
    case POOL_USED_MEM_CURRENT: *(uint64_t *)value = pool->used; break;
    case POOL_RESERVED_MEM_HIGH:
    case POOL_USED_MEM_HIGH: *(uint64_t *)value = pool->used_high; break;
    default: pthread_mutex_unlock(&rt.lock); return record(cudaErrorInvalidValue);
    }
    pthread_mutex_unlock(&rt.lock);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemPoolTrimTo(void *memPool, size_t minBytesToKeep) {
    (void)minBytesToKeep;
    return known_pool(memPool) ? cudaSuccess : record(cudaErrorInvalidValue);
}

/* Free and total bytes of the virtual device's global memory, as the device server counts them. */
EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    if (!free_bytes || !total_bytes) return record(cudaErrorInvalidValue);
    if (rt.sticky) return rt.sticky;
    struct buf b = {0};
    uint8_t *reply = NULL;
    cudaError_t status = request(OP_MEM_INFO, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        *free_bytes = get_u64(&p);
        *total_bytes = get_u64(&p);
    }
    free(reply);
    return record(status);
}
