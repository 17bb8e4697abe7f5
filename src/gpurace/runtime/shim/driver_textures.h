/* The driver API's CUDA arrays, 2D copies and texture and surface objects (cuArrayCreate, cuMemcpy2D,
 * cuTexObjectCreate, ...), for gpurace's libcuda.so.1: the driver's descriptors (layouts of CUDA 13's cuda.h)
 * translated into the runtime's (textures.h), which then does the work. Included by cudart.c after textures.h.
 *
 * The two APIs differ in a few meanings, kept here: an array's texel is a CUarray_format and a channel count
 * (1, 2 or 4); a texture reads integer texels as normalized floats unless CU_TRSF_READ_AS_INTEGER is set (the
 * runtime's readMode says it the other way round), and reads float texels as they are.
 */

/* CUarray_format, of the formats textures.h follows; others (block-compressed, video) stop the program. */
enum {
    CU_AD_FORMAT_UNSIGNED_INT8 = 0x01, CU_AD_FORMAT_UNSIGNED_INT16 = 0x02, CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
    CU_AD_FORMAT_SIGNED_INT8 = 0x08, CU_AD_FORMAT_SIGNED_INT16 = 0x09, CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
    CU_AD_FORMAT_HALF = 0x10, CU_AD_FORMAT_FLOAT = 0x20,
};
enum { cudaChannelFormatKindSigned = 0, cudaChannelFormatKindUnsigned = 1, cudaChannelFormatKindFloat = 2 };
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3, CU_MEMORYTYPE_UNIFIED = 4 };
enum { CU_TRSF_READ_AS_INTEGER = 0x01, CU_TRSF_NORMALIZED_COORDINATES = 0x02, CU_TRSF_SRGB = 0x10,
       CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION = 0x20, CU_TRSF_SEAMLESS_CUBEMAP = 0x40 };
enum { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };

struct cu_array_descriptor { /* CUDA_ARRAY_DESCRIPTOR */
    size_t width, height;
    int format;
    unsigned int channels;
};

struct cu_array3d_descriptor { /* CUDA_ARRAY3D_DESCRIPTOR: its flags are cudaMalloc3DArray's */
    size_t width, height, depth;
    int format;
    unsigned int channels, flags;
};

struct cu_memcpy2d { /* CUDA_MEMCPY2D */
    size_t src_x_bytes, src_y;
    int src_type;
    const void *src_host;
    uint64_t src_device;
    void *src_array;
    size_t src_pitch;
    size_t dst_x_bytes, dst_y;
    int dst_type;
    void *dst_host;
    uint64_t dst_device;
    void *dst_array;
    size_t dst_pitch;
    size_t width_bytes, height;
};

struct cu_resource_desc { /* CUDA_RESOURCE_DESC: its resource types are the runtime's */
    int type;
    union {
        struct { void *array; } array;
        struct { void *mipmap; } mipmap;
        struct { uint64_t device; int format; unsigned int channels; size_t bytes; } linear;
        struct { uint64_t device; int format; unsigned int channels; size_t width, height, pitch; } pitch2d;
        struct { int reserved[32]; } reserved;
    } res;
    unsigned int flags;
};

struct cu_texture_desc { /* CUDA_TEXTURE_DESC: its address and filter modes are the runtime's */
    int address_mode[3];
    int filter_mode;
    unsigned int flags;
    unsigned int max_anisotropy;
    int mipmap_filter_mode;
    float mipmap_level_bias, min_mipmap_level_clamp, max_mipmap_level_clamp;
    float border_color[4];
    int reserved[12];
};

_Static_assert(sizeof(struct cu_memcpy2d) == 128, "CUDA_MEMCPY2D as in CUDA 13");
_Static_assert(sizeof(struct cu_resource_desc) == 144, "CUDA_RESOURCE_DESC as in CUDA 13");
_Static_assert(sizeof(struct cu_texture_desc) == 104, "CUDA_TEXTURE_DESC as in CUDA 13");

/* The runtime's channel description of `channels` channels of `format`; a format textures.h does not follow
   stops the program, and a channel count the driver refuses is cudaErrorInvalidValue (0 returned). */
static int channel_desc(int format, unsigned int channels, struct cudaChannelFormatDesc *out, const char *call) {
    int bits, kind;
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: bits = 8, kind = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: bits = 16, kind = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: bits = 32, kind = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_SIGNED_INT8: bits = 8, kind = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_SIGNED_INT16: bits = 16, kind = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_SIGNED_INT32: bits = 32, kind = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_HALF: bits = 16, kind = cudaChannelFormatKindFloat; break;
    case CU_AD_FORMAT_FLOAT: bits = 32, kind = cudaChannelFormatKindFloat; break;
    default: {
        char what[96];
        snprintf(what, sizeof what, "%s of CUarray_format 0x%x", call, (unsigned)format);
        unsupported(what, NULL);
    }
    }
    if (channels != 1 && channels != 2 && channels != 4) return 0;
    *out = (struct cudaChannelFormatDesc){bits, channels > 1 ? bits : 0, channels > 2 ? bits : 0,
                                          channels > 2 ? bits : 0, kind};
    return 1;
}

EXPORT cudaError_t __cudaGpuraceCuArrayCreate(void **array, const struct cu_array_descriptor *d) {
    struct cudaChannelFormatDesc desc;
    if (!array || !d || !channel_desc(d->format, d->channels, &desc, "cuArrayCreate")) return cudaErrorInvalidValue;
    return cudaMallocArray(array, &desc, d->width, d->height, 0);
}

EXPORT cudaError_t __cudaGpuraceCuArray3DCreate(void **array, const struct cu_array3d_descriptor *d) {
    struct cudaChannelFormatDesc desc;
    if (!array || !d || !channel_desc(d->format, d->channels, &desc, "cuArray3DCreate")) return cudaErrorInvalidValue;
    return cudaMalloc3DArray(array, &desc, (struct array_extent){d->width, d->height, d->depth}, d->flags);
}

/* Where a side of a 2D copy starts, for a side in linear memory; NULL for an array or a type the driver refuses. */
static const uint8_t *linear_start(int type, const void *host, uint64_t device, size_t x, size_t y, size_t pitch) {
    if (type == CU_MEMORYTYPE_HOST) return (const uint8_t *)host + y * pitch + x;
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED)
        return (const uint8_t *)(uintptr_t)device + y * pitch + x;
    return NULL;
}

/* The cudaMemcpyKind of a copy between the two sides' memory types (arrays are device memory). */
static int copy_kind(int src, int dst) {
    if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED) return cudaMemcpyDefault;
    int from_host = src == CU_MEMORYTYPE_HOST, to_host = dst == CU_MEMORYTYPE_HOST;
    return from_host ? (to_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                     : (to_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
}

/* cuMemcpy2D (and its Async form on `stream`): a 2D copy between linear memory and arrays, in any direction. */
EXPORT cudaError_t __cudaGpuraceCuMemcpy2D(const struct cu_memcpy2d *p, void *stream, int async) {
    if (!p) return cudaErrorInvalidValue;
    int kind = copy_kind(p->src_type, p->dst_type);
    size_t w = p->width_bytes, h = p->height;
    const uint8_t *src = linear_start(p->src_type, p->src_host, p->src_device, p->src_x_bytes, p->src_y, p->src_pitch);
    uint8_t *dst = (uint8_t *)linear_start(p->dst_type, p->dst_host, p->dst_device, p->dst_x_bytes, p->dst_y,
                                           p->dst_pitch);
    int src_array = p->src_type == CU_MEMORYTYPE_ARRAY, dst_array = p->dst_type == CU_MEMORYTYPE_ARRAY;
    if ((!src && !src_array) || (!dst && !dst_array)) return cudaErrorInvalidValue;
    const char *call = async ? "cuMemcpy2DAsync" : "cuMemcpy2D";
    if (src_array && dst_array) {
        if (async) unsupported("cuMemcpy2DAsync between two arrays", NULL);
        return array_to_array_2d(p->dst_array, p->dst_x_bytes, p->dst_y, p->src_array, p->src_x_bytes, p->src_y, w, h,
                                 kind, LEGACY_STREAM, call);
    }
    if (dst_array)
        return to_array(p->dst_array, p->dst_x_bytes, p->dst_y, src, p->src_pitch, w, h, kind, stream, async, call);
    if (src_array)
        return from_array(dst, p->dst_pitch, p->src_array, p->src_x_bytes, p->src_y, w, h, kind, stream, async, call);
    return copy_2d(dst, p->dst_pitch, src, p->src_pitch, w, h, kind, stream, async, call);
}

/* The runtime's description of a driver resource; 0 (cudaErrorInvalidValue) for one the driver refuses. */
static int resource_desc(const struct cu_resource_desc *d, struct cudaResourceDesc *out, const char *call) {
    memset(out, 0, sizeof *out);
    out->resType = d->type;
    out->flags = d->flags;
    switch (d->type) {
    case cudaResourceTypeArray: out->res.array.array = d->res.array.array; return 1;
    case cudaResourceTypeMipmappedArray: out->res.mipmap.mipmap = d->res.mipmap.mipmap; return 1;
    case cudaResourceTypeLinear:
        out->res.linear.devPtr = (void *)(uintptr_t)d->res.linear.device;
        out->res.linear.sizeInBytes = d->res.linear.bytes;
        return channel_desc(d->res.linear.format, d->res.linear.channels, &out->res.linear.desc, call);
    case cudaResourceTypePitch2D:
        out->res.pitch2D.devPtr = (void *)(uintptr_t)d->res.pitch2d.device;
        out->res.pitch2D.width = d->res.pitch2d.width, out->res.pitch2D.height = d->res.pitch2d.height;
        out->res.pitch2D.pitchInBytes = d->res.pitch2d.pitch;
        return channel_desc(d->res.pitch2d.format, d->res.pitch2d.channels, &out->res.pitch2D.desc, call);
    }
    return 0;
}

/* The channel description of the texels a resource holds (an array's from the array). */
static const struct cudaChannelFormatDesc *texels(const struct cudaResourceDesc *r) {
    if (r->resType == cudaResourceTypeArray && r->res.array.array)
        return &((const struct cuda_array *)r->res.array.array)->desc;
    if (r->resType == cudaResourceTypeLinear) return &r->res.linear.desc;
    if (r->resType == cudaResourceTypePitch2D) return &r->res.pitch2D.desc;
    return NULL;
}

EXPORT cudaError_t __cudaGpuraceCuTexObjectCreate(uint64_t *object, const struct cu_resource_desc *resource,
                                                  const struct cu_texture_desc *texture, const void *view) {
    struct cudaResourceDesc r;
    struct cudaTextureDesc t;
    if (!object || !resource || !texture || !resource_desc(resource, &r, "cuTexObjectCreate"))
        return cudaErrorInvalidValue;
    if (view) unsupported("cuTexObjectCreate with a resource view", NULL);
    memset(&t, 0, sizeof t);
    memcpy(t.addressMode, texture->address_mode, sizeof t.addressMode);
    t.filterMode = texture->filter_mode;
    const struct cudaChannelFormatDesc *c = texels(&r);
    int integer = c && c->f != cudaChannelFormatKindFloat;
    t.readMode = integer && !(texture->flags & CU_TRSF_READ_AS_INTEGER) ? cudaReadModeNormalizedFloat
                                                                         : cudaReadModeElementType;
    t.sRGB = !!(texture->flags & CU_TRSF_SRGB);
    memcpy(t.borderColor, texture->border_color, sizeof t.borderColor);
    t.normalizedCoords = !!(texture->flags & CU_TRSF_NORMALIZED_COORDINATES);
    t.maxAnisotropy = texture->max_anisotropy;
    t.mipmapFilterMode = texture->mipmap_filter_mode;
    t.mipmapLevelBias = texture->mipmap_level_bias;
    t.minMipmapLevelClamp = texture->min_mipmap_level_clamp, t.maxMipmapLevelClamp = texture->max_mipmap_level_clamp;
    t.disableTrilinearOptimization = !!(texture->flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION);
    t.seamlessCubemap = !!(texture->flags & CU_TRSF_SEAMLESS_CUBEMAP);
    return cudaCreateTextureObject(object, &r, &t, NULL);
}

EXPORT cudaError_t __cudaGpuraceCuSurfObjectCreate(uint64_t *object, const struct cu_resource_desc *resource) {
    struct cudaResourceDesc r;
    if (!object || !resource || !resource_desc(resource, &r, "cuSurfObjectCreate")) return cudaErrorInvalidValue;
    return cudaCreateSurfaceObject(object, &r);
}
