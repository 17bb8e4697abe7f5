/* CUDA arrays, texture objects and surface objects (included by cudart.c; see `gpurace/sim/textures.py`).
 *
 * A CUDA array is a block of the global arena that this runtime allocates
 * with an ordinary MALLOC request: row-major, pitch = width x texel size,
 * one row for a 1D array, the slices of a 3D array (the layers of a layered
 * one) one after the other. So copies into and out of arrays are ordinary
 * (2D) copies, checked and ordered by the server like any other, and a
 * kernel's texel fetches and surface accesses are global memory accesses
 * of those bytes. cudaArray_t points to a `struct cuda_array` kept here.
 *
 * Texture and surface objects are made by the server (OBJECT_CREATE), which
 * keeps the table every launch reads; the handle is the server's. This
 * runtime keeps the descriptors the program gave, for the Get calls.
 * A cube map is a layered 2D array of six square faces (+x, -x, +y, -y, +z,
 * -z), which the server is told it is. A mipmapped array is its levels,
 * CUDA arrays one after the other in one allocation (level 0 first), and a
 * texture object over it tells the server every level and the mipmap fields
 * of its cudaTextureDesc. Layered cube maps (mipmapped or not), mipmapped cube
 * maps, resource views and sRGB are not supported: they stop the program,
 * naming the call.
 */

struct cudaChannelFormatDesc {
    int x, y, z, w;
    int f; /* cudaChannelFormatKind: Signed 0, Unsigned 1, Float 2 */
};

struct array_extent { /* cudaExtent */
    size_t width, height, depth;
};

struct cudaResourceDesc {
    int resType; /* cudaResourceTypeArray 0, MipmappedArray 1, Linear 2, Pitch2D 3 */
    union {
        struct { void *array; } array;
        struct { void *mipmap; } mipmap;
        struct { void *devPtr; struct cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
        struct { void *devPtr; struct cudaChannelFormatDesc desc; size_t width, height, pitchInBytes; } pitch2D;
        struct { int reserved[32]; } reserved;
    } res;
    unsigned int flags;
};

struct cudaTextureDesc {
    int addressMode[3];
    int filterMode;
    int readMode;
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned int maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int seamlessCubemap;
};

_Static_assert(sizeof(struct cudaChannelFormatDesc) == 20, "cudaChannelFormatDesc as in CUDA 13");
_Static_assert(sizeof(struct cudaResourceDesc) == 144, "cudaResourceDesc as in CUDA 13");
_Static_assert(sizeof(struct cudaTextureDesc) == 72, "cudaTextureDesc as in CUDA 13");

enum { OP_OBJECT_CREATE = 40, OP_OBJECT_DESTROY = 41 };
enum { OBJECT_TEXTURE = 0, OBJECT_SURFACE = 1 };
enum { RESOURCE_ARRAY = 0, RESOURCE_LINEAR = 1, RESOURCE_PITCH2D = 2 };
enum { LAYOUT_LAYERED = 1, LAYOUT_CUBEMAP = 2 }; /* the bits of OBJECT_CREATE's `layered` */
#define CUBEMAP_FACES 6
enum { cudaResourceTypeArray = 0, cudaResourceTypeMipmappedArray = 1, cudaResourceTypeLinear = 2,
       cudaResourceTypePitch2D = 3 };
enum { cudaArrayLayered = 1, cudaArraySurfaceLoadStore = 2, cudaArrayCubemap = 4, cudaArrayTextureGather = 8 };

/* height 0: one row (a 1D array); depth: the slices of a 3D array or the layers of a layered one (flags), 0 when
   there are none. Slice z starts after the rows of slice z-1. */
struct cuda_array {
    uint64_t base;
    struct cudaChannelFormatDesc desc;
    size_t width, height, depth;
    unsigned int flags;
    const void *mipmap; /* the mipmapped array whose level it is (cudaGetMipmappedArrayLevel), else NULL */
};

#define MAX_MIPMAP_LEVELS 64
/* A mipmapped array: level l is max(1, n >> l) texels along each axis of level 0 (layers stay as many). */
struct cuda_mipmap {
    unsigned nlevels;
    struct cuda_array levels[MAX_MIPMAP_LEVELS];
};

static size_t texel_bytes(const struct cudaChannelFormatDesc *d) {
    if (d->x < 0 || d->y < 0 || d->z < 0 || d->w < 0) return 0;
    return ((size_t)d->x + d->y + d->z + d->w) / 8;
}

static size_t array_rows(const struct cuda_array *a) { return a->height ? a->height : 1; }

static size_t array_slices(const struct cuda_array *a) { return a->depth ? a->depth : 1; }

static size_t array_pitch(const struct cuda_array *a) { return a->width * texel_bytes(&a->desc); }

EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, int f) {
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

/* cudaErrorInvalidValue when CUDA refuses an array of this format, extent and flags. */
static cudaError_t new_array_check(const struct cudaChannelFormatDesc *desc, size_t width, size_t height, size_t depth,
                                   unsigned int flags) {
    unsigned int known = cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayTextureGather | cudaArrayCubemap;
    if (!desc || width == 0 || texel_bytes(desc) == 0 || (flags & ~known) ||
        ((flags & cudaArrayLayered) && depth == 0) || (!(flags & cudaArrayLayered) && depth && !height))
        return cudaErrorInvalidValue;
    if ((flags & cudaArrayCubemap) && (width != height || depth != CUBEMAP_FACES)) /* six square faces */
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

static cudaError_t new_array(void **array, const struct cudaChannelFormatDesc *desc, size_t width, size_t height,
                             size_t depth, unsigned int flags, const char *call) {
    cudaError_t status = new_array_check(desc, width, height, depth, flags);
    if (!array || status != cudaSuccess) return record(array ? status : cudaErrorInvalidValue);
    struct cuda_array *a = calloc(1, sizeof *a);
    if (!a) die("%s", "out of host memory");
    *a = (struct cuda_array){0, *desc, width, height, depth, flags, NULL};
    size_t slice = array_pitch(a) * array_rows(a);
    if (slice / array_rows(a) != array_pitch(a) || array_slices(a) > SIZE_MAX / slice) {
        free(a);
        return record(cudaErrorMemoryAllocation);
    }
    void *base = NULL;
    status = allocate(&base, slice * array_slices(a), KIND_DEVICE, 0, call);
    if (status != cudaSuccess) {
        free(a);
        return status;
    }
    a->base = (uintptr_t)base;
    *array = a;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocArray(void **array, const struct cudaChannelFormatDesc *desc, size_t width,
                                   size_t height, unsigned int flags) {
    if (flags & cudaArrayLayered) return record(cudaErrorInvalidValue);
    return new_array(array, desc, width, height, 0, flags, "cudaMallocArray");
}

/* 3D arrays (depth slices of height rows), layered 1D and 2D arrays (depth layers) and cube maps (six faces);
   not layered cube maps. */
EXPORT cudaError_t cudaMalloc3DArray(void **array, const struct cudaChannelFormatDesc *desc, struct array_extent extent,
                                     unsigned int flags) {
    if ((flags & cudaArrayCubemap) && (flags & cudaArrayLayered))
        unsupported("cudaMalloc3DArray of a layered cubemap", NULL);
    return new_array(array, desc, extent.width, extent.height, extent.depth, flags, "cudaMalloc3DArray");
}

static size_t halved(size_t n, unsigned level) { return n ? (n >> level ? n >> level : 1) : 0; }

/* Mipmapped 1D, 2D and 3D arrays and layered 1D and 2D ones (not cube maps), with numLevels clamped to
   [1, 1 + floor(log2(the largest extent))] as CUDA clamps it; one allocation holds every level. */
EXPORT cudaError_t cudaMallocMipmappedArray(void **mipmappedArray, const struct cudaChannelFormatDesc *desc,
                                            struct array_extent extent, unsigned int numLevels, unsigned int flags) {
    if (flags & cudaArrayCubemap) unsupported("cudaMallocMipmappedArray of a cubemap", NULL);
    struct cuda_array probe;
    int layered = flags & cudaArrayLayered;
    cudaError_t status = new_array_check(desc, extent.width, extent.height, extent.depth, flags);
    if (!mipmappedArray || status != cudaSuccess) return record(mipmappedArray ? status : cudaErrorInvalidValue);
    size_t largest = extent.width > extent.height ? extent.width : extent.height;
    if (!layered && extent.depth > largest) largest = extent.depth;
    unsigned most = 1;
    while (largest >> most) most++;
    unsigned nlevels = numLevels < 1 ? 1 : numLevels > most ? most : numLevels;
    probe = (struct cuda_array){0, *desc, extent.width, extent.height, extent.depth, flags, NULL};
    size_t slice = array_pitch(&probe) * array_rows(&probe); /* level 0's; all levels hold less than twice it */
    if (slice / array_rows(&probe) != array_pitch(&probe) || array_slices(&probe) > SIZE_MAX / 2 / slice)
        return record(cudaErrorMemoryAllocation);
    struct cuda_mipmap *m = calloc(1, sizeof *m);
    if (!m) die("%s", "out of host memory");
    m->nlevels = nlevels;
    size_t total = 0;
    for (unsigned l = 0; l < nlevels; l++) {
        probe = (struct cuda_array){0, *desc, halved(extent.width, l), halved(extent.height, l),
                                    layered ? extent.depth : halved(extent.depth, l), flags, m};
        m->levels[l] = probe;
        m->levels[l].base = total; /* an offset until the allocation is made */
        total += array_pitch(&probe) * array_rows(&probe) * array_slices(&probe);
    }
    void *base = NULL;
    status = allocate(&base, total, KIND_DEVICE, 0, "cudaMallocMipmappedArray");
    if (status != cudaSuccess) {
        free(m);
        return status;
    }
    for (unsigned l = 0; l < nlevels; l++) m->levels[l].base += (uintptr_t)base;
    *mipmappedArray = m;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetMipmappedArrayLevel(void **levelArray, const void *mipmappedArray, unsigned int level) {
    const struct cuda_mipmap *m = mipmappedArray;
    if (!levelArray || !m || level >= m->nlevels) return record(cudaErrorInvalidValue);
    *levelArray = (void *)&m->levels[level];
    return cudaSuccess;
}

EXPORT cudaError_t cudaFreeMipmappedArray(void *mipmappedArray) {
    if (!mipmappedArray) return cudaSuccess;
    struct cuda_mipmap *m = mipmappedArray;
    cudaError_t status = release((void *)(uintptr_t)m->levels[0].base, KIND_DEVICE, "cudaFreeMipmappedArray");
    if (status == cudaSuccess) free(m);
    return status;
}

/* A level of a mipmapped array is freed with its array (cudaFreeMipmappedArray), never on its own. */
EXPORT cudaError_t cudaFreeArray(void *array) {
    if (!array) return cudaSuccess;
    struct cuda_array *a = array;
    if (a->mipmap) return record(cudaErrorInvalidValue);
    cudaError_t status = release((void *)(uintptr_t)a->base, KIND_DEVICE, "cudaFreeArray");
    if (status == cudaSuccess) free(a);
    return status;
}

EXPORT cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct array_extent *extent,
                                    unsigned int *flags, void *array) {
    const struct cuda_array *a = array;
    if (!a) return record(cudaErrorInvalidValue);
    if (desc) *desc = a->desc;
    if (extent) *extent = (struct array_extent){a->width, a->height, a->depth};
    if (flags) *flags = a->flags;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, const void *array) {
    if (!desc || !array) return record(cudaErrorInvalidValue);
    *desc = ((const struct cuda_array *)array)->desc;
    return cudaSuccess;
}

/* The address of byte `w_offset` of row `h_offset`, when `width` bytes x `height` rows from there fit the array. */
static uint8_t *array_at(const struct cuda_array *a, size_t w_offset, size_t h_offset, size_t width, size_t height) {
    if (!a || w_offset > array_pitch(a) || width > array_pitch(a) - w_offset || h_offset > array_rows(a) ||
        height > array_rows(a) - h_offset)
        return NULL;
    return (uint8_t *)(uintptr_t)(a->base + h_offset * array_pitch(a) + w_offset);
}

/* `count` bytes from (w_offset, h_offset) on: arrays are dense, so any run of whole or partial rows is one span. */
static uint8_t *array_span(const struct cuda_array *a, size_t w_offset, size_t h_offset, size_t count) {
    uint8_t *at = array_at(a, w_offset, h_offset, 0, 0);
    size_t size = a ? array_pitch(a) * array_rows(a) : 0;
    if (!at || count > size - (size_t)(at - (uint8_t *)(uintptr_t)a->base)) return NULL;
    return at;
}

static cudaError_t to_array(void *dst, size_t w_offset, size_t h_offset, const void *src, size_t spitch, size_t width,
                            size_t height, int kind, void *stream, int async, const char *call) {
    uint8_t *at = array_at(dst, w_offset, h_offset, width, height);
    if (!at) return record(cudaErrorInvalidValue);
    return copy_2d(at, array_pitch(dst), src, spitch, width, height, kind, stream, async, call);
}

static cudaError_t from_array(void *dst, size_t dpitch, const void *src, size_t w_offset, size_t h_offset, size_t width,
                              size_t height, int kind, void *stream, int async, const char *call) {
    uint8_t *at = array_at(src, w_offset, h_offset, width, height);
    if (!at) return record(cudaErrorInvalidValue);
    return copy_2d(dst, dpitch, at, array_pitch(src), width, height, kind, stream, async, call);
}

EXPORT cudaError_t cudaMemcpy2DToArray(void *dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch,
                                       size_t width, size_t height, int kind) {
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, LEGACY_STREAM, SYNC, "cudaMemcpy2DToArray");
}

EXPORT cudaError_t cudaMemcpy2DToArrayAsync(void *dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch,
                                            size_t width, size_t height, int kind, void *stream) {
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, ASYNC, "cudaMemcpy2DToArrayAsync");
}

EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, const void *src, size_t wOffset, size_t hOffset,
                                         size_t width, size_t height, int kind) {
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, LEGACY_STREAM, SYNC,
                      "cudaMemcpy2DFromArray");
}

EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, const void *src, size_t wOffset,
                                              size_t hOffset, size_t width, size_t height, int kind, void *stream) {
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, ASYNC,
                      "cudaMemcpy2DFromArrayAsync");
}

static cudaError_t array_to_array_2d(void *dst, size_t w_dst, size_t h_dst, const void *src, size_t w_src, size_t h_src,
                                     size_t width, size_t height, int kind, void *stream, const char *call) {
    uint8_t *to = array_at(dst, w_dst, h_dst, width, height), *from = array_at(src, w_src, h_src, width, height);
    if (!to || !from) return record(cudaErrorInvalidValue);
    return copy_2d(to, array_pitch(dst), from, array_pitch(src), width, height, kind, stream, SYNC, call);
}

/* The deprecated 1D copies: `count` bytes from (w_offset, h_offset) on (`array_span`). */
static cudaError_t to_array_span(void *dst, size_t w_offset, size_t h_offset, const void *src, size_t count, int kind,
                                 void *stream, int async, const char *call) {
    uint8_t *at = array_span(dst, w_offset, h_offset, count);
    if (!at) return record(cudaErrorInvalidValue);
    return copy(at, src, count, kind, stream, async, call);
}

static cudaError_t from_array_span(void *dst, const void *src, size_t w_offset, size_t h_offset, size_t count, int kind,
                                   void *stream, int async, const char *call) {
    uint8_t *at = array_span(src, w_offset, h_offset, count);
    if (!at) return record(cudaErrorInvalidValue);
    return copy(dst, at, count, kind, stream, async, call);
}

static cudaError_t array_to_array(void *dst, size_t w_dst, size_t h_dst, const void *src, size_t w_src, size_t h_src,
                                  size_t count, int kind, void *stream, const char *call) {
    uint8_t *to = array_span(dst, w_dst, h_dst, count), *from = array_span(src, w_src, h_src, count);
    if (!to || !from) return record(cudaErrorInvalidValue);
    return copy(to, from, count, kind, stream, SYNC, call);
}

EXPORT cudaError_t cudaMemcpy2DArrayToArray(void *dst, size_t wOffsetDst, size_t hOffsetDst, const void *src,
                                            size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
                                            int kind) {
    return array_to_array_2d(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height, kind,
                             LEGACY_STREAM, "cudaMemcpy2DArrayToArray");
}

EXPORT cudaError_t cudaMemcpyToArray(void *dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                     int kind) {
    return to_array_span(dst, wOffset, hOffset, src, count, kind, LEGACY_STREAM, SYNC, "cudaMemcpyToArray");
}

EXPORT cudaError_t cudaMemcpyFromArray(void *dst, const void *src, size_t wOffset, size_t hOffset, size_t count,
                                       int kind) {
    return from_array_span(dst, src, wOffset, hOffset, count, kind, LEGACY_STREAM, SYNC, "cudaMemcpyFromArray");
}

EXPORT cudaError_t cudaMemcpyToArrayAsync(void *dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                          int kind, void *stream) {
    return to_array_span(dst, wOffset, hOffset, src, count, kind, stream, ASYNC, "cudaMemcpyToArrayAsync");
}

EXPORT cudaError_t cudaMemcpyFromArrayAsync(void *dst, const void *src, size_t wOffset, size_t hOffset, size_t count,
                                            int kind, void *stream) {
    return from_array_span(dst, src, wOffset, hOffset, count, kind, stream, ASYNC, "cudaMemcpyFromArrayAsync");
}

EXPORT cudaError_t cudaMemcpyArrayToArray(void *dst, size_t wOffsetDst, size_t hOffsetDst, const void *src,
                                          size_t wOffsetSrc, size_t hOffsetSrc, size_t count, int kind) {
    return array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind, LEGACY_STREAM,
                          "cudaMemcpyArrayToArray");
}

/* The per-thread-default-stream forms (nvcc --default-stream per-thread). */
EXPORT cudaError_t cudaMemcpy2DToArray_ptds(void *dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch,
                                            size_t width, size_t height, int kind) {
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, PER_THREAD_STREAM, SYNC,
                    "cudaMemcpy2DToArray");
}

EXPORT cudaError_t cudaMemcpy2DToArrayAsync_ptsz(void *dst, size_t wOffset, size_t hOffset, const void *src,
                                                 size_t spitch, size_t width, size_t height, int kind, void *stream) {
    return to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, PER_THREAD(stream), ASYNC,
                    "cudaMemcpy2DToArrayAsync");
}

EXPORT cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch, const void *src, size_t wOffset,
                                              size_t hOffset, size_t width, size_t height, int kind) {
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, PER_THREAD_STREAM, SYNC,
                      "cudaMemcpy2DFromArray");
}

EXPORT cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t wOffset,
                                                   size_t hOffset, size_t width, size_t height, int kind,
                                                   void *stream) {
    return from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, PER_THREAD(stream), ASYNC,
                      "cudaMemcpy2DFromArrayAsync");
}

EXPORT cudaError_t cudaMemcpy2DArrayToArray_ptds(void *dst, size_t wOffsetDst, size_t hOffsetDst, const void *src,
                                                 size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
                                                 int kind) {
    return array_to_array_2d(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height, kind,
                             PER_THREAD_STREAM, "cudaMemcpy2DArrayToArray");
}

EXPORT cudaError_t cudaMemcpyToArray_ptds(void *dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                          int kind) {
    return to_array_span(dst, wOffset, hOffset, src, count, kind, PER_THREAD_STREAM, SYNC, "cudaMemcpyToArray");
}

EXPORT cudaError_t cudaMemcpyFromArray_ptds(void *dst, const void *src, size_t wOffset, size_t hOffset, size_t count,
                                            int kind) {
    return from_array_span(dst, src, wOffset, hOffset, count, kind, PER_THREAD_STREAM, SYNC, "cudaMemcpyFromArray");
}

EXPORT cudaError_t cudaMemcpyToArrayAsync_ptsz(void *dst, size_t wOffset, size_t hOffset, const void *src,
                                               size_t count, int kind, void *stream) {
    return to_array_span(dst, wOffset, hOffset, src, count, kind, PER_THREAD(stream), ASYNC, "cudaMemcpyToArrayAsync");
}

EXPORT cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, const void *src, size_t wOffset, size_t hOffset,
                                                 size_t count, int kind, void *stream) {
    return from_array_span(dst, src, wOffset, hOffset, count, kind, PER_THREAD(stream), ASYNC,
                           "cudaMemcpyFromArrayAsync");
}

EXPORT cudaError_t cudaMemcpyArrayToArray_ptds(void *dst, size_t wOffsetDst, size_t hOffsetDst, const void *src,
                                               size_t wOffsetSrc, size_t hOffsetSrc, size_t count, int kind) {
    return array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind, PER_THREAD_STREAM,
                          "cudaMemcpyArrayToArray");
}

/* cudaMemcpy3DParms, under a name of its own. Positions and the extent's width are in elements of the array
   when one side is an array, in bytes otherwise; z counts the slices (or layers) of an array. */
struct memcpy3d_params {
    void *srcArray;
    struct { size_t x, y, z; } srcPos;
    struct { void *ptr; size_t pitch, xsize, ysize; } srcPtr;
    void *dstArray;
    struct { size_t x, y, z; } dstPos;
    struct { void *ptr; size_t pitch, xsize, ysize; } dstPtr;
    struct { size_t width, height, depth; } extent;
    int kind;
};

_Static_assert(sizeof(struct memcpy3d_params) == 160, "cudaMemcpy3DParms as in CUDA 13");

/* One slice of a 3D copy side: the address of row 0 of slice `z` from `pos` on, and its pitch; NULL when the
   rows do not fit an array. */
static uint8_t *slice_at(const struct cuda_array *array, void *ptr, size_t pitch, size_t ysize, size_t x, size_t y,
                         size_t z, size_t width, size_t height, size_t elem, size_t *row_pitch) {
    if (array) {
        *row_pitch = array_pitch(array);
        uint8_t *at = z < array_slices(array) ? array_at(array, x * elem, y, width, height) : NULL;
        return at ? at + z * array_pitch(array) * array_rows(array) : NULL;
    }
    *row_pitch = pitch;
    return (uint8_t *)ptr + z * pitch * ysize + y * pitch + x;
}

struct pitched_ptr { /* cudaPitchedPtr */
    void *ptr;
    size_t pitch, xsize, ysize;
};

/* Pitched memory for `depth` slices of `height` rows, rows padded as cudaMallocPitch pads them. */
EXPORT cudaError_t cudaMalloc3D(struct pitched_ptr *pitchedDevPtr, struct array_extent extent) {
    if (!pitchedDevPtr) return record(cudaErrorInvalidValue);
    size_t padded = (extent.width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
    size_t rows = extent.height * extent.depth;
    if (extent.depth && rows / extent.depth != extent.height) return record(cudaErrorMemoryAllocation);
    if (rows && padded > SIZE_MAX / rows) return record(cudaErrorMemoryAllocation);
    void *ptr = NULL;
    cudaError_t status = allocate(&ptr, padded * rows, KIND_DEVICE, 0, "cudaMalloc3D");
    if (status == cudaSuccess) *pitchedDevPtr = (struct pitched_ptr){ptr, padded, extent.width, extent.height};
    return status;
}

static cudaError_t copy_3d(const struct memcpy3d_params *p, void *stream, int async, const char *call) {
    if (!p || !p->srcArray == !p->srcPtr.ptr || !p->dstArray == !p->dstPtr.ptr) return record(cudaErrorInvalidValue);
    const struct cuda_array *src = p->srcArray, *dst = p->dstArray;
    size_t elem = src ? texel_bytes(&src->desc) : dst ? texel_bytes(&dst->desc) : 1;
    size_t width = p->extent.width * elem, height = p->extent.height, depth = p->extent.depth;
    for (size_t z = 0; z < depth; z++) {
        size_t spitch, dpitch;
        uint8_t *from = slice_at(src, p->srcPtr.ptr, p->srcPtr.pitch, p->srcPtr.ysize, p->srcPos.x, p->srcPos.y,
                                 p->srcPos.z + z, width, height, elem, &spitch);
        uint8_t *to = slice_at(dst, p->dstPtr.ptr, p->dstPtr.pitch, p->dstPtr.ysize, p->dstPos.x, p->dstPos.y,
                               p->dstPos.z + z, width, height, elem, &dpitch);
        if (!from || !to) return record(cudaErrorInvalidValue);
        cudaError_t status = copy_2d(to, dpitch, from, spitch, width, height, p->kind, stream, async, call);
        if (status != cudaSuccess) return status;
    }
    return cudaSuccess;
}

/* `depth` slices of `height` rows of `extent.width` bytes set to `value`, slices `pitch * ysize` bytes apart (the
   pitched pointer cudaMalloc3D gives). */
static cudaError_t fill_3d(struct pitched_ptr p, int value, struct array_extent extent, void *stream, int async,
                           const char *call) {
    if (extent.depth > 1 && p.ysize < extent.height) return record(cudaErrorInvalidValue);
    for (size_t z = 0; z < extent.depth; z++) {
        cudaError_t status = fill((uint8_t *)p.ptr + z * p.pitch * p.ysize, p.pitch, value, extent.width,
                                  extent.height, stream, async, call);
        if (status != cudaSuccess) return status;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemset3D(struct pitched_ptr pitchedDevPtr, int value, struct array_extent extent) {
    return fill_3d(pitchedDevPtr, value, extent, LEGACY_STREAM, SYNC, "cudaMemset3D");
}

EXPORT cudaError_t cudaMemset3DAsync(struct pitched_ptr pitchedDevPtr, int value, struct array_extent extent,
                                     void *stream) {
    return fill_3d(pitchedDevPtr, value, extent, stream, ASYNC, "cudaMemset3DAsync");
}

EXPORT cudaError_t cudaMemset3D_ptds(struct pitched_ptr pitchedDevPtr, int value, struct array_extent extent) {
    return fill_3d(pitchedDevPtr, value, extent, PER_THREAD_STREAM, SYNC, "cudaMemset3D");
}

EXPORT cudaError_t cudaMemset3DAsync_ptsz(struct pitched_ptr pitchedDevPtr, int value, struct array_extent extent,
                                          void *stream) {
    return fill_3d(pitchedDevPtr, value, extent, PER_THREAD(stream), ASYNC, "cudaMemset3DAsync");
}

EXPORT cudaError_t cudaMemcpy3D(const struct memcpy3d_params *p) { return copy_3d(p, LEGACY_STREAM, SYNC, "cudaMemcpy3D"); }

EXPORT cudaError_t cudaMemcpy3DAsync(const struct memcpy3d_params *p, void *stream) {
    return copy_3d(p, stream, ASYNC, "cudaMemcpy3DAsync");
}

EXPORT cudaError_t cudaMemcpy3D_ptds(const struct memcpy3d_params *p) {
    return copy_3d(p, PER_THREAD_STREAM, SYNC, "cudaMemcpy3D");
}

EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct memcpy3d_params *p, void *stream) {
    return copy_3d(p, PER_THREAD(stream), ASYNC, "cudaMemcpy3DAsync");
}

/* The descriptors each live object was made from, for the Get calls. */
struct texture_object {
    uint64_t handle;
    struct cudaResourceDesc resource;
    struct cudaTextureDesc texture;
};

static struct texture_object *texture_objects;
static size_t ntexture_objects, texture_objects_cap;

static struct texture_object *find_object(uint64_t handle) {
    for (size_t i = 0; i < ntexture_objects; i++)
        if (texture_objects[i].handle == handle) return &texture_objects[i];
    return NULL;
}

/* OBJECT_CREATE for `resource` (and `texture`, NULL for a surface); the new handle in *handle. */
static cudaError_t create_object(uint64_t *handle, const struct cudaResourceDesc *resource,
                                 const struct cudaTextureDesc *texture, const char *call) {
    uint32_t kind;
    uint64_t base, width, height = 1, pitch = 0, depth = 1;
    uint32_t dims = 1, layered = 0;
    const struct cudaChannelFormatDesc *desc;
    const struct cuda_mipmap *mipmap = resource->resType == cudaResourceTypeMipmappedArray && texture
                                           ? resource->res.mipmap.mipmap : NULL;
    if (mipmap && !texture->normalizedCoords)
        unsupported("cudaCreateTextureObject of a mipmapped array with unnormalized coordinates", NULL);
    if (resource->resType == cudaResourceTypeArray || mipmap) {
        const struct cuda_array *a = mipmap ? &mipmap->levels[0] : resource->res.array.array;
        if (!a) return record(cudaErrorInvalidValue);
        /* GPUs take a surface over a mipmap level without the flag (NVIDIA's bindlessTexture sample needs it) */
        if (!texture && !(a->flags & cudaArraySurfaceLoadStore) && !a->mipmap) return record(cudaErrorInvalidValue);
        kind = RESOURCE_ARRAY, base = a->base, desc = &a->desc, width = a->width, height = array_rows(a);
        pitch = array_pitch(a), depth = array_slices(a);
        if (a->flags & cudaArrayLayered) layered = LAYOUT_LAYERED;
        if (a->flags & cudaArrayCubemap) layered = LAYOUT_LAYERED | LAYOUT_CUBEMAP; /* laid out as six layers */
        dims = a->depth && !layered ? 3 : a->height ? 2 : 1;
    } else if (resource->resType == cudaResourceTypeLinear && texture) {
        desc = &resource->res.linear.desc;
        if (!resource->res.linear.devPtr || texel_bytes(desc) == 0) return record(cudaErrorInvalidValue);
        kind = RESOURCE_LINEAR, base = (uintptr_t)resource->res.linear.devPtr;
        width = resource->res.linear.sizeInBytes / texel_bytes(desc);
    } else if (resource->resType == cudaResourceTypePitch2D && texture) {
        desc = &resource->res.pitch2D.desc;
        if (!resource->res.pitch2D.devPtr || texel_bytes(desc) == 0 ||
            resource->res.pitch2D.pitchInBytes < resource->res.pitch2D.width * texel_bytes(desc))
            return record(cudaErrorInvalidValue);
        kind = RESOURCE_PITCH2D, base = (uintptr_t)resource->res.pitch2D.devPtr, width = resource->res.pitch2D.width;
        height = resource->res.pitch2D.height, pitch = resource->res.pitch2D.pitchInBytes, dims = 2;
    } else {
        return record(cudaErrorInvalidValue);
    }
    if (width == 0 || height == 0) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    put_u32(&b, texture ? OBJECT_TEXTURE : OBJECT_SURFACE);
    put_u32(&b, kind);
    put_u64(&b, base);
    put_u64(&b, width);
    put_u64(&b, height);
    put_u64(&b, pitch);
    put_u32(&b, dims);
    put_u64(&b, depth);
    put_u32(&b, layered);
    put_u32(&b, (uint32_t)desc->x);
    put_u32(&b, (uint32_t)desc->y);
    put_u32(&b, (uint32_t)desc->z);
    put_u32(&b, (uint32_t)desc->w);
    put_u32(&b, (uint32_t)desc->f);
    struct cudaTextureDesc none;
    memset(&none, 0, sizeof none);
    const struct cudaTextureDesc *t = texture ? texture : &none;
    for (int i = 0; i < 3; i++) put_u32(&b, (uint32_t)t->addressMode[i]);
    put_u32(&b, (uint32_t)t->filterMode);
    put_u32(&b, (uint32_t)t->readMode);
    put_u32(&b, t->normalizedCoords ? 1 : 0);
    put(&b, t->borderColor, sizeof t->borderColor);
    put_u32(&b, mipmap ? mipmap->nlevels : 0);
    if (mipmap) {
        put_u32(&b, (uint32_t)t->mipmapFilterMode);
        put(&b, &t->mipmapLevelBias, sizeof(float));
        put(&b, &t->minMipmapLevelClamp, sizeof(float));
        put(&b, &t->maxMipmapLevelClamp, sizeof(float));
        put_u32(&b, t->maxAnisotropy);
        for (unsigned l = 0; l < mipmap->nlevels; l++) {
            const struct cuda_array *level = &mipmap->levels[l];
            put_u64(&b, level->base);
            put_u64(&b, level->width);
            put_u64(&b, array_rows(level));
            put_u64(&b, array_slices(level));
        }
    }
    put_site(&b, call, NULL);
    uint8_t *reply = NULL;
    pthread_mutex_lock(&rt.lock);
    cudaError_t status = exchange(OP_OBJECT_CREATE, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        *handle = get_u64(&p);
        texture_objects = grow(texture_objects, &texture_objects_cap, ntexture_objects + 1, sizeof *texture_objects);
        texture_objects[ntexture_objects++] = (struct texture_object){*handle, *resource, *t};
    }
    pthread_mutex_unlock(&rt.lock);
    free(reply);
    return record(status);
}

static cudaError_t destroy_object(uint64_t handle) {
    struct buf b = {0};
    put_u64(&b, handle);
    pthread_mutex_lock(&rt.lock);
    cudaError_t status = exchange(OP_OBJECT_DESTROY, &b, NULL);
    struct texture_object *o = find_object(handle);
    if (status == cudaSuccess && o) *o = texture_objects[--ntexture_objects];
    pthread_mutex_unlock(&rt.lock);
    return record(status);
}

EXPORT cudaError_t cudaCreateTextureObject(uint64_t *pTexObject, const struct cudaResourceDesc *pResDesc,
                                           const struct cudaTextureDesc *pTexDesc, const void *pResViewDesc) {
    if (!pTexObject || !pResDesc || !pTexDesc) return record(cudaErrorInvalidValue);
    if (pResViewDesc) unsupported("cudaCreateTextureObject with a resource view", NULL);
    if (pTexDesc->sRGB) unsupported("cudaCreateTextureObject with sRGB", NULL);
    if (rt.sticky) return rt.sticky;
    return create_object(pTexObject, pResDesc, pTexDesc, "cudaCreateTextureObject");
}

EXPORT cudaError_t cudaCreateSurfaceObject(uint64_t *pSurfObject, const struct cudaResourceDesc *pResDesc) {
    if (!pSurfObject || !pResDesc) return record(cudaErrorInvalidValue);
    if (rt.sticky) return rt.sticky;
    return create_object(pSurfObject, pResDesc, NULL, "cudaCreateSurfaceObject");
}

EXPORT cudaError_t cudaDestroyTextureObject(uint64_t texObject) { return texObject ? destroy_object(texObject) : cudaSuccess; }

EXPORT cudaError_t cudaDestroySurfaceObject(uint64_t surfObject) { return surfObject ? destroy_object(surfObject) : cudaSuccess; }

EXPORT cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc, uint64_t texObject) {
    pthread_mutex_lock(&rt.lock);
    struct texture_object *o = find_object(texObject);
    if (o && pResDesc) *pResDesc = o->resource;
    pthread_mutex_unlock(&rt.lock);
    return record(o && pResDesc ? cudaSuccess : cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *pTexDesc, uint64_t texObject) {
    pthread_mutex_lock(&rt.lock);
    struct texture_object *o = find_object(texObject);
    if (o && pTexDesc) *pTexDesc = o->texture;
    pthread_mutex_unlock(&rt.lock);
    return record(o && pTexDesc ? cudaSuccess : cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc, uint64_t surfObject) {
    return cudaGetTextureObjectResourceDesc(pResDesc, surfObject);
}
