/* Stream-ordered allocation (cudaMallocAsync, cudaFreeAsync) and the device's one memory pool, included by
 * cudart.c.
 *
 * Every call runs to completion before it returns, in the order the program makes them, so the stream's earlier
 * work is done when an allocation or free arrives: cudaMallocAsync allocates at once (as cudaMalloc, from the
 * same arena), and cudaFreeAsync frees at once without waiting for the device as cudaFree does. What the stream
 * order means for races is kept: the free is an operation of its stream that writes the whole allocation, so a
 * kernel or copy of another stream that the program did not order before it races with it (a use in stream
 * order after the free is a use-after-free, as for any freed memory).
 *
 * Pools: the device's default pool is the only one (cudaDeviceGetDefaultMemPool, cudaDeviceGetMemPool,
 * cudaMallocFromPoolAsync with it). Its attributes are kept and reported; the usage attributes report the bytes
 * of the pool's live allocations. Memory is given back when freed, so trimming has nothing to do. Other pools
 * (cudaMemPoolCreate), IPC export and access control stop the program as unsupported.
 */

static char default_pool; /* the default pool's handle: its address */
#define DEFAULT_POOL ((void *)&default_pool)

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

static struct {
    int reuse[3];               /* the three cudaMemPoolReuse* flags, all 1 by default as on a GPU */
    uint64_t release_threshold; /* 0 by default */
    uint64_t used, used_high;   /* bytes of live cudaMallocAsync allocations, and their high-water mark */
} pool = {.reuse = {1, 1, 1}};

struct pool_allocation {
    uintptr_t address;
    size_t size;
};
static struct pool_allocation *pool_allocations; /* guarded by rt.lock */
static size_t npool_allocations, pool_allocations_cap;

/* Stream-ordered allocation during a stream capture makes a memory node of the graph, which gpurace's graphs do
   not have (see graphs.h): the program is stopped rather than given memory outside the graph. */
static void refuse_in_capture(void *stream, const char *call) {
    if (__atomic_load_n(&captures, __ATOMIC_ACQUIRE) && is_capturing(stream)) unsupported(call, NULL);
}

static cudaError_t allocate_async(void **ptr, size_t size, void *pool_handle, void *stream, const char *call) {
    if (pool_handle != DEFAULT_POOL) return record(cudaErrorInvalidValue);
    refuse_in_capture(stream, call);
    cudaError_t status = allocate(ptr, size, KIND_DEVICE, 0, call);
    if (status != cudaSuccess || !*ptr) return status;
    pthread_mutex_lock(&rt.lock);
    pool_allocations = grow(pool_allocations, &pool_allocations_cap, npool_allocations, sizeof *pool_allocations);
    pool_allocations[npool_allocations++] = (struct pool_allocation){(uintptr_t)*ptr, size};
    pool.used += size;
    if (pool.used > pool.used_high) pool.used_high = pool.used;
    pthread_mutex_unlock(&rt.lock);
    return cudaSuccess;
}

/* `address` was freed (by cudaFreeAsync, or by cudaFree, which frees pool memory too): the pool no longer holds it. */
static void forget_pool_allocation(uintptr_t address) {
    pthread_mutex_lock(&rt.lock);
    for (size_t i = 0; i < npool_allocations; i++)
        if (pool_allocations[i].address == address) {
            pool.used -= pool_allocations[i].size;
            pool_allocations[i] = pool_allocations[--npool_allocations];
            break;
        }
    pthread_mutex_unlock(&rt.lock);
}

static cudaError_t free_async(void *ptr, void *stream, const char *call) {
    if (rt.sticky) return rt.sticky;
    refuse_in_capture(stream, call);
    if (!ptr) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)ptr);
    put_u64(&b, (uintptr_t)stream);
    put_site(&b, call, NULL);
    cudaError_t status = record(request(OP_FREE_ASYNC, &b, NULL));
    if (status == cudaSuccess) forget_pool_allocation((uintptr_t)ptr);
    return status;
}

EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, void *stream) {
    return allocate_async(devPtr, size, DEFAULT_POOL, stream, "cudaMallocAsync");
}

EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, void *stream) {
    return allocate_async(devPtr, size, DEFAULT_POOL, PER_THREAD(stream), "cudaMallocAsync");
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
    *memPool = DEFAULT_POOL;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetMemPool(void **memPool, int device) {
    return cudaDeviceGetDefaultMemPool(memPool, device);
}

/* Setting the current pool to the default one changes nothing; any other pool is not one of this device's. */
EXPORT cudaError_t cudaDeviceSetMemPool(int device, void *memPool) {
    if (device != 0) return record(cudaErrorInvalidDevice);
    return memPool == DEFAULT_POOL ? cudaSuccess : record(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaMemPoolSetAttribute(void *memPool, int attr, void *value) {
    if (memPool != DEFAULT_POOL || !value) return record(cudaErrorInvalidValue);
    switch (attr) {
    case POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case POOL_REUSE_ALLOW_OPPORTUNISTIC:
    case POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: pool.reuse[attr - 1] = *(int *)value != 0; break;
    case POOL_RELEASE_THRESHOLD: pool.release_threshold = *(uint64_t *)value; break;
    /* The high-water marks may only be reset to 0, which sets them to the current usage. */
    case POOL_RESERVED_MEM_HIGH:
    case POOL_USED_MEM_HIGH:
        if (*(uint64_t *)value != 0) return record(cudaErrorInvalidValue);
        pthread_mutex_lock(&rt.lock);
        pool.used_high = pool.used;
        pthread_mutex_unlock(&rt.lock);
        break;
    default: return record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

/* Memory is reserved exactly as it is used (freed memory goes back at once): reserved and used are the same. */
EXPORT cudaError_t cudaMemPoolGetAttribute(void *memPool, int attr, void *value) {
    if (memPool != DEFAULT_POOL || !value) return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    switch (attr) {
    case POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case POOL_REUSE_ALLOW_OPPORTUNISTIC:
    case POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)value = pool.reuse[attr - 1]; break;
    case POOL_RELEASE_THRESHOLD: *(uint64_t *)value = pool.release_threshold; break;
    case POOL_RESERVED_MEM_CURRENT:
    case POOL_USED_MEM_CURRENT: *(uint64_t *)value = pool.used; break;
    case POOL_RESERVED_MEM_HIGH:
    case POOL_USED_MEM_HIGH: *(uint64_t *)value = pool.used_high; break;
    default: pthread_mutex_unlock(&rt.lock); return record(cudaErrorInvalidValue);
    }
    pthread_mutex_unlock(&rt.lock);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemPoolTrimTo(void *memPool, size_t minBytesToKeep) {
    (void)minBytesToKeep;
    return memPool == DEFAULT_POOL ? cudaSuccess : record(cudaErrorInvalidValue);
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
