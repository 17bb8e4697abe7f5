/* Hints about where memory should live and how it is cached, included by cudart.c: unified memory prefetches,
 * advice and stream attachment, stream attributes (access policy windows, synchronization policy) and the
 * persisting L2 cache.
 *
 * None of them changes what a program computes on a GPU, only how fast: the simulator has one memory and no
 * cache, so they are checked as a GPU's runtime checks them and otherwise accepted. Managed memory is coherent
 * here as on a GPU with concurrent managed access (cudaDevAttrConcurrentManagedAccess is 1), so attaching
 * memory to a stream changes no happens-before either: the races between the host and the streams are those
 * the program's synchronisation leaves (see "Streams, events and the host" in the README).
 */

static cudaError_t check_location(struct mem_location location) {
    if (location.type < MEM_LOCATION_DEVICE || location.type > MEM_LOCATION_HOST_NUMA_CURRENT) return cudaErrorInvalidValue;
    if (location.type == MEM_LOCATION_DEVICE && location.id != 0) return cudaErrorInvalidDevice;
    return cudaSuccess;
}

static cudaError_t prefetch(const void *devPtr, size_t count, struct mem_location location, unsigned int flags) {
    if (rt.sticky) return rt.sticky;
    if (!devPtr || count == 0 || flags != 0) return record(cudaErrorInvalidValue);
    return record(check_location(location));
}

EXPORT cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct mem_location location,
                                        unsigned int flags, void *stream) {
    (void)stream;
    return prefetch(devPtr, count, location, flags);
}

EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct mem_location location,
                                             unsigned int flags, void *stream) {
    (void)stream;
    return prefetch(devPtr, count, location, flags);
}

enum { ADVISE_FIRST = 1, ADVISE_LAST = 6 }; /* cudaMemAdviseSetReadMostly .. cudaMemAdviseUnsetAccessedBy */

EXPORT cudaError_t cudaMemAdvise(const void *devPtr, size_t count, int advice, struct mem_location location) {
    if (rt.sticky) return rt.sticky;
    if (!devPtr || count == 0 || advice < ADVISE_FIRST || advice > ADVISE_LAST) return record(cudaErrorInvalidValue);
    return advice <= 2 ? cudaSuccess : record(check_location(location)); /* read-mostly advice has no location */
}

enum { ATTACH_GLOBAL = 1, ATTACH_HOST = 2, ATTACH_SINGLE = 4 };

static cudaError_t attach(void *devPtr, unsigned int flags) {
    if (rt.sticky) return rt.sticky;
    if (!devPtr || (flags != ATTACH_GLOBAL && flags != ATTACH_HOST && flags != ATTACH_SINGLE))
        return record(cudaErrorInvalidValue);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamAttachMemAsync(void *stream, void *devPtr, size_t length, unsigned int flags) {
    (void)stream, (void)length;
    return attach(devPtr, flags);
}

EXPORT cudaError_t cudaStreamAttachMemAsync_ptsz(void *stream, void *devPtr, size_t length, unsigned int flags) {
    (void)stream, (void)length;
    return attach(devPtr, flags);
}

/* ------------------------------------------------------------------------ */
/* Stream attributes: kept per stream and reported back                      */
/* ------------------------------------------------------------------------ */

enum {
    STREAM_ATTR_ACCESS_POLICY_WINDOW = 1,
    STREAM_ATTR_SYNCHRONIZATION_POLICY = 3,
    STREAM_ATTR_PRIORITY = 8,
    STREAM_ATTR_MEM_SYNC_DOMAIN_MAP = 9,
    STREAM_ATTR_MEM_SYNC_DOMAIN = 10,
    STREAM_ATTR_NVLINK_UTIL_CENTRIC_SCHEDULING = 16,
};

struct stream_attribute {
    void *stream;
    int attr;
    char value[64]; /* a cudaStreamAttrValue (cudaLaunchAttributeValue, 64 bytes) */
};
static struct stream_attribute *stream_attributes; /* guarded by rt.lock */
static size_t nstream_attributes, stream_attributes_cap;

/* The attributes a stream may have that change nothing the simulator shows; memory synchronisation domains,
   which change what a fence orders, are not modelled and stop the program, by name. */
static cudaError_t check_stream_attribute(int attr, const char *call) {
    const char *refused;
    switch (attr) {
    case STREAM_ATTR_ACCESS_POLICY_WINDOW:
    case STREAM_ATTR_SYNCHRONIZATION_POLICY:
    case STREAM_ATTR_PRIORITY:
    case STREAM_ATTR_NVLINK_UTIL_CENTRIC_SCHEDULING: return cudaSuccess;
    case STREAM_ATTR_MEM_SYNC_DOMAIN_MAP: refused = "cudaLaunchAttributeMemSyncDomainMap"; break;
    case STREAM_ATTR_MEM_SYNC_DOMAIN: refused = "cudaLaunchAttributeMemSyncDomain"; break;
    default: return cudaErrorInvalidValue;
    }
    char what[160];
    snprintf(what, sizeof what, "%s with the stream attribute %s", call, refused);
    unsupported(what, NULL);
}

static struct stream_attribute *find_stream_attribute(void *stream, int attr) {
    for (size_t i = 0; i < nstream_attributes; i++)
        if (stream_attributes[i].stream == stream && stream_attributes[i].attr == attr) return &stream_attributes[i];
    return NULL;
}

static cudaError_t set_stream_attribute(void *stream, int attr, const void *value) {
    if (!value) return record(cudaErrorInvalidValue);
    cudaError_t status = check_stream_attribute(attr, "cudaStreamSetAttribute");
    if (status != cudaSuccess) return record(status);
    if (attr == STREAM_ATTR_PRIORITY) return cudaSuccess; /* no priorities (the range is [0, 0]): it stays 0 */
    pthread_mutex_lock(&rt.lock);
    struct stream_attribute *a = find_stream_attribute(stream, attr);
    if (!a) {
        stream_attributes = grow(stream_attributes, &stream_attributes_cap, nstream_attributes, sizeof *a);
        a = &stream_attributes[nstream_attributes++];
        a->stream = stream, a->attr = attr;
    }
    memcpy(a->value, value, sizeof a->value);
    pthread_mutex_unlock(&rt.lock);
    return cudaSuccess;
}

/* A destroyed stream's attributes go with it (its handle may be a later stream's). */
static void forget_stream_attributes(void *stream) {
    pthread_mutex_lock(&rt.lock);
    for (size_t i = 0; i < nstream_attributes;)
        if (stream_attributes[i].stream == stream) stream_attributes[i] = stream_attributes[--nstream_attributes];
        else i++;
    pthread_mutex_unlock(&rt.lock);
}

/* An attribute never set reads as zeros: no window, the default synchronization policy, priority 0. */
static cudaError_t get_stream_attribute(void *stream, int attr, void *value) {
    if (!value) return record(cudaErrorInvalidValue);
    cudaError_t status = check_stream_attribute(attr, "cudaStreamGetAttribute");
    if (status != cudaSuccess) return record(status);
    pthread_mutex_lock(&rt.lock);
    struct stream_attribute *a = find_stream_attribute(stream, attr);
    if (a) memcpy(value, a->value, sizeof a->value);
    else memset(value, 0, sizeof a->value);
    pthread_mutex_unlock(&rt.lock);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamSetAttribute(void *stream, int attr, const void *value) {
    return set_stream_attribute(stream, attr, value);
}

EXPORT cudaError_t cudaStreamSetAttribute_ptsz(void *stream, int attr, const void *value) {
    return set_stream_attribute(PER_THREAD(stream), attr, value);
}

EXPORT cudaError_t cudaStreamGetAttribute(void *stream, int attr, void *value) {
    return get_stream_attribute(stream, attr, value);
}

EXPORT cudaError_t cudaStreamGetAttribute_ptsz(void *stream, int attr, void *value) {
    return get_stream_attribute(PER_THREAD(stream), attr, value);
}

/* No lines are persisting in a cache the simulator does not have: resetting them is done. */
EXPORT cudaError_t cudaCtxResetPersistingL2Cache(void) { return rt.sticky ? rt.sticky : cudaSuccess; }
