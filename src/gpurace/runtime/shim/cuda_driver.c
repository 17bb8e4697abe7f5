/*
 * gpurace's libcuda.so.1: the CUDA driver library, for programs that link it (`-lcuda`).
 *
 * Many programs link the driver beside the runtime without calling it, or call it only to start it, to ask
 * its version, or to encode a TMA tensor map; others are written against the driver API: they make a context,
 * load their kernels as modules (a PTX, fatbinary or cubin image: cuModuleLoad, cuModuleLoadData), allocate
 * and copy with cuMem*, and launch with cuLaunchKernel. Those calls are answered here as the simulated
 * device's runtime answers their runtime counterparts, mostly by making them; modules, driver launches and
 * wide memsets go through entries of gpurace's runtime of their own (`driver_support.h`). Every other driver
 * function stops the program, naming itself and its host line, through gpurace's runtime (libcudart.so.13),
 * which holds the connection to gpurace. The runtime's functions are looked up by name, not linked: a program
 * is linked against NVIDIA's runtime, which lacks gpurace's own entries, and runs with gpurace's.
 *
 * The device has one context, the runtime's: cuCtxCreate and cuDevicePrimaryCtxRetain hand out the same
 * handle, and destroying or releasing it frees nothing, since the runtime's allocations live in it too (a GPU
 * frees a destroyed context's memory: allocations a program leaves to cuCtxDestroy are leaks under
 * --leak-check, as compute-sanitizer reports them). A driver call leaves the runtime's last error
 * (cudaGetLastError) as it found it: the two APIs keep theirs apart.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
typedef struct { unsigned int x, y, z; } dim3;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_SUPPORTED = 801,
};

/* A function of the runtime loaded in this process; without gpurace's runtime, the program stops. */
static void *runtime(const char *name) {
    void *fn = dlsym(RTLD_DEFAULT, name);
    if (!fn || !dlsym(RTLD_DEFAULT, "__cudaGpuraceUnsupportedDriverCall")) {
        fprintf(stderr, "gpurace: this is gpurace's CUDA driver library: run this program with `gpurace exec`\n");
        _exit(2);
    }
    return fn;
}

/* RUNTIME(name, type): the runtime's function `name`, of function type `type`, looked up once. */
#define RUNTIME(name, type)                                  \
    ({                                                       \
        static __typeof__(type) fn_;                         \
        if (!fn_) fn_ = (type)runtime(name);                 \
        fn_;                                                 \
    })

static void __attribute__((noreturn)) unsupported(const char *name) {
    RUNTIME("__cudaGpuraceUnsupportedDriverCall", void (*)(const char *))(name);
    _exit(2); /* not reached: the runtime stops the program */
}

/* The CUresult of a runtime call's cudaError_t. Where the driver has the same error it has the same number;
   the runtime's own errors about arguments are the driver's CUDA_ERROR_INVALID_VALUE, a symbol or a kernel
   not found CUDA_ERROR_NOT_FOUND and CUDA_ERROR_INVALID_HANDLE. Any other error stops the program rather
   than reach it under a wrong name. */
static CUresult driver_result(int error, const char *call) {
    switch (error) {
    case 0: case 1: case 2: case 101: case 400: case 600: case 801:
    case 401: /* cudaErrorIllegalState */
        return error;
    case 9:  /* cudaErrorInvalidConfiguration */
    case 12: /* cudaErrorInvalidPitchValue */
    case 17: /* cudaErrorInvalidDevicePointer */
    case 21: /* cudaErrorInvalidMemcpyDirection */
        return CUDA_ERROR_INVALID_VALUE;
    case 13: /* cudaErrorInvalidSymbol */
        return CUDA_ERROR_NOT_FOUND;
    case 98: /* cudaErrorInvalidDeviceFunction */
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (error >= 700 && error <= 720) return error; /* launch failures: the same numbers in both APIs */
    if (error >= 900 && error <= 910) return error; /* stream capture and graph update: the same numbers too */
    char what[160];
    snprintf(what, sizeof what, "%s returning cudaError_t %d, which has no CUresult here", call, error);
    unsupported(what);
}

/* `function` as cuda.h spells it for programs, written to `name`: `cuMemAlloc` for cuMemAlloc_v2, `cuMemcpy`
   for cuMemcpy_ptds. */
static const char *spelled(const char *function, char name[64]) {
    snprintf(name, 64, "%s", function);
    char *version = strstr(name, "_v");
    if (version && version[2] >= '0' && version[2] <= '9') *version = 0;
    char *per_thread = strstr(name, "_pt");
    if (per_thread && (strcmp(per_thread, "_ptds") == 0 || strcmp(per_thread, "_ptsz") == 0)) *per_thread = 0;
    return name;
}

/* CALL_AS(function, expr): the CUresult of runtime call `expr`, made for driver function `function` (the
   requests it makes name it), leaving the runtime's last error as it was. CALL(expr): for the function it is
   in; the helpers below take their caller's name as `call`. */
#define CALL(expr) CALL_AS(__func__, expr)
#define CALL_AS(function, expr)                                                                    \
    ({                                                                                             \
        int (*swap_)(int) = RUNTIME("__cudaGpuraceSwapLastError", int (*)(int));                   \
        const char *(*call_)(const char *) = RUNTIME("__cudaGpuraceDriverCall", const char *(*)(const char *));\
        static __thread char name_[64];                                                            \
        int saved_ = swap_(0);                                                                     \
        const char *outer_ = call_(spelled(function, name_));                                      \
        int error_ = (expr);                                                                       \
        call_(outer_);                                                                             \
        swap_(saved_);                                                                             \
        driver_result(error_, function);                                                           \
    })

/* ------------------------------------------------------------------------ */
/* Initialisation, the device and its context                               */
/* ------------------------------------------------------------------------ */

EXPORT CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

EXPORT CUresult cuDriverGetVersion(int *version) {
    return CALL(RUNTIME("cudaDriverGetVersion", int (*)(int *))(version));
}

EXPORT CUresult cuDeviceGetCount(int *count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = 1; /* the one simulated device */
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

/* cudaDeviceAttr numbers its attributes as CUdevice_attribute does. */
EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
    return CALL(RUNTIME("cudaDeviceGetAttribute", int (*)(int *, int, int))(value, attribute, device));
}

EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice device) {
    if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuDeviceGetAttribute(major, 75, device);
    return r ? r : cuDeviceGetAttribute(minor, 76, device);
}

/* The name and memory of cudaDeviceProp, which begins with `char name[256]` and has `size_t totalGlobalMem`
   after the 16-byte uuid, the 8-byte luid and an unsigned int (driver_types.h). */
#define PROPERTIES_BYTES 4096
#define TOTAL_GLOBAL_MEM_OFFSET 288

static CUresult properties(char *out, CUdevice device, const char *call) {
    return CALL_AS(call, RUNTIME("cudaGetDeviceProperties", int (*)(void *, int))(out, device));
}

EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
    char p[PROPERTIES_BYTES];
    if (!name || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = properties(p, device, __func__);
    if (r) return r;
    snprintf(name, (size_t)length, "%s", p);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
    char p[PROPERTIES_BYTES];
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = properties(p, device, __func__);
    if (!r) memcpy(bytes, p + TOTAL_GLOBAL_MEM_OFFSET, sizeof *bytes);
    return r;
}

static char the_context; /* the one context's handle */
static int contexts;     /* contexts made and not yet destroyed or released: one more is an error */
static pthread_mutex_t context_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult make_context(CUcontext *context, CUdevice device) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&context_lock);
    contexts++;
    pthread_mutex_unlock(&context_lock);
    *context = &the_context;
    return CUDA_SUCCESS;
}

static CUresult end_context(void) {
    pthread_mutex_lock(&context_lock);
    int left = contexts > 0 ? --contexts : -1;
    pthread_mutex_unlock(&context_lock);
    return left < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *context, unsigned int flags, CUdevice device) {
    (void)flags; /* scheduling and host-mapping flags: the simulated device behaves alike under all */
    return make_context(context, device);
}

/* CUDA 13's cuCtxCreate: `params` asks for execution affinity or a CIG context, which one device lacks. */
EXPORT CUresult cuCtxCreate_v4(CUcontext *context, void *params, unsigned int flags, CUdevice device) {
    const void *const *fields = params;
    if (params && (fields[0] || fields[2])) unsupported("cuCtxCreate with execution affinity or a CIG context");
    return cuCtxCreate_v2(context, flags, device);
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext context) {
    return context == &the_context ? end_context() : CUDA_ERROR_INVALID_CONTEXT;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) { return make_context(context, device); }

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
    return device == 0 ? end_context() : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *context) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    *context = &the_context;
    return CUDA_SUCCESS;
}

static CUresult check_context(CUcontext context) {
    return context == &the_context || context == NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext context) { return check_context(context); }
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) { return check_context(context); }

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *context) {
    if (context) *context = &the_context;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device) { return cuDeviceGet(device, 0); }

EXPORT CUresult cuCtxSynchronize(void) { return CALL(RUNTIME("cudaDeviceSynchronize", int (*)(void))()); }

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

enum { MEMCPY_HOST_TO_DEVICE = 1, MEMCPY_DEVICE_TO_HOST = 2, MEMCPY_DEVICE_TO_DEVICE = 3, MEMCPY_DEFAULT = 4 };
typedef int (*copy_fn)(void *, const void *, size_t, int);
typedef int (*copy_async_fn)(void *, const void *, size_t, int, void *);

#define PTR(address) ((void *)(uintptr_t)(address))

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *address, size_t bytes) {
    return CALL(RUNTIME("cudaMalloc", int (*)(CUdeviceptr *, size_t))(address, bytes));
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *address, size_t bytes, unsigned int flags) {
    return CALL(RUNTIME("cudaMallocManaged", int (*)(CUdeviceptr *, size_t, unsigned))(address, bytes, flags));
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr address) { return CALL(RUNTIME("cudaFree", int (*)(void *))(PTR(address))); }

EXPORT CUresult cuMemAllocHost_v2(void **pointer, size_t bytes) {
    return CALL(RUNTIME("cudaMallocHost", int (*)(void **, size_t))(pointer, bytes));
}

/* CU_MEMHOSTALLOC_* are cudaHostAlloc*'s flags. */
EXPORT CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags) {
    return CALL(RUNTIME("cudaHostAlloc", int (*)(void **, size_t, unsigned))(pointer, bytes, flags));
}

EXPORT CUresult cuMemFreeHost(void *pointer) { return CALL(RUNTIME("cudaFreeHost", int (*)(void *))(pointer)); }

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
    return CALL(RUNTIME("cudaMemGetInfo", int (*)(size_t *, size_t *))(free_bytes, total_bytes));
}

/* A synchronous copy on the legacy default stream, or (`per_thread`: the _ptds forms below) on the calling
   thread's default stream. */
static CUresult copy(void *dst, const void *src, size_t bytes, int kind, int per_thread, const char *call) {
    if (per_thread) return CALL_AS(call, RUNTIME("cudaMemcpy_ptds", copy_fn)(dst, src, bytes, kind));
    return CALL_AS(call, RUNTIME("cudaMemcpy", copy_fn)(dst, src, bytes, kind));
}

static CUresult copy_async(void *dst, const void *src, size_t bytes, int kind, CUstream stream, const char *call) {
    return CALL_AS(call, RUNTIME("cudaMemcpyAsync", copy_async_fn)(dst, src, bytes, kind, stream));
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
    return copy(PTR(dst), src, bytes, MEMCPY_HOST_TO_DEVICE, 0, __func__);
}
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
    return copy(dst, PTR(src), bytes, MEMCPY_DEVICE_TO_HOST, 0, __func__);
}
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return copy(PTR(dst), PTR(src), bytes, MEMCPY_DEVICE_TO_DEVICE, 0, __func__);
}
EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return copy(PTR(dst), PTR(src), bytes, MEMCPY_DEFAULT, 0, __func__);
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
    return copy_async(PTR(dst), src, bytes, MEMCPY_HOST_TO_DEVICE, stream, __func__);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return copy_async(dst, PTR(src), bytes, MEMCPY_DEVICE_TO_HOST, stream, __func__);
}
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return copy_async(PTR(dst), PTR(src), bytes, MEMCPY_DEVICE_TO_DEVICE, stream, __func__);
}
EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return copy_async(PTR(dst), PTR(src), bytes, MEMCPY_DEFAULT, stream, __func__);
}

enum { SYNC = 0, ASYNC = 1 };
typedef int (*fill_fn)(void *, uint32_t, unsigned, size_t, void *, int, const char *);

static CUresult fill(CUdeviceptr dst, uint32_t value, unsigned element, size_t count, CUstream stream, int async,
                     const char *call) {
    return CALL_AS(call, RUNTIME("__cudaGpuraceFill", fill_fn)(PTR(dst), value, element, count, stream, async, call));
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
    return fill(dst, value, 1, count, NULL, SYNC, __func__);
}
EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) {
    return fill(dst, value, 2, count, NULL, SYNC, __func__);
}
EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count) {
    return fill(dst, value, 4, count, NULL, SYNC, __func__);
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
    return fill(dst, value, 1, count, stream, ASYNC, __func__);
}
EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
    return fill(dst, value, 2, count, stream, ASYNC, __func__);
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
    return fill(dst, value, 4, count, stream, ASYNC, __func__);
}

/* CUDA arrays, 2D copies, texture and surface objects: the runtime translates the driver's descriptors
   (driver_textures.h). A CUarray is the runtime's cudaArray_t, a CUtexObject its cudaTextureObject_t. */
EXPORT CUresult cuArrayCreate_v2(void **array, const void *descriptor) {
    return CALL(RUNTIME("__cudaGpuraceCuArrayCreate", int (*)(void **, const void *))(array, descriptor));
}
EXPORT CUresult cuArray3DCreate_v2(void **array, const void *descriptor) {
    return CALL(RUNTIME("__cudaGpuraceCuArray3DCreate", int (*)(void **, const void *))(array, descriptor));
}
EXPORT CUresult cuArrayDestroy(void *array) {
    if (!array) return CUDA_ERROR_INVALID_HANDLE;
    return CALL(RUNTIME("cudaFreeArray", int (*)(void *))(array));
}

typedef int (*memcpy2d_fn)(const void *, void *, int);
EXPORT CUresult cuMemcpy2D_v2(const void *copy) {
    return CALL(RUNTIME("__cudaGpuraceCuMemcpy2D", memcpy2d_fn)(copy, NULL, SYNC));
}
EXPORT CUresult cuMemcpy2DUnaligned_v2(const void *copy) {
    return CALL(RUNTIME("__cudaGpuraceCuMemcpy2D", memcpy2d_fn)(copy, NULL, SYNC));
}
EXPORT CUresult cuMemcpy2DAsync_v2(const void *copy, CUstream stream) {
    return CALL(RUNTIME("__cudaGpuraceCuMemcpy2D", memcpy2d_fn)(copy, stream, ASYNC));
}

EXPORT CUresult cuTexObjectCreate(unsigned long long *object, const void *resource, const void *texture,
                                  const void *view) {
    typedef int (*texture_fn)(unsigned long long *, const void *, const void *, const void *);
    return CALL(RUNTIME("__cudaGpuraceCuTexObjectCreate", texture_fn)(object, resource, texture, view));
}
EXPORT CUresult cuTexObjectDestroy(unsigned long long object) {
    return CALL(RUNTIME("cudaDestroyTextureObject", int (*)(unsigned long long))(object));
}
EXPORT CUresult cuSurfObjectCreate(unsigned long long *object, const void *resource) {
    typedef int (*surface_fn)(unsigned long long *, const void *);
    return CALL(RUNTIME("__cudaGpuraceCuSurfObjectCreate", surface_fn)(object, resource));
}
EXPORT CUresult cuSurfObjectDestroy(unsigned long long object) {
    return CALL(RUNTIME("cudaDestroySurfaceObject", int (*)(unsigned long long))(object));
}

/* ------------------------------------------------------------------------ */
/* Modules and their kernels                                                 */
/* ------------------------------------------------------------------------ */

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_WRAPPER_MAGIC 0x466243B1u /* __fatBinC_Wrapper_t: { int magic, version; const void *data; ... } */

/* A CUfunction: one per kernel of a module, however often the program asks for it. */
struct function {
    struct function *next;
    char *name;
};

/* A CUmodule: the handle the server knows the module by, and the functions handed out of it. It is never freed,
   so that its address names no other module: after cuModuleUnload it is `unloaded`, and asking it for a
   function or a variable is CUDA_ERROR_INVALID_HANDLE. */
struct module {
    struct function *functions;
    pthread_mutex_t lock;
    int unloaded;
};

/* A linked image of several inputs (cuLinkComplete, below): this magic, its size and the number of inputs. */
#define LINKED_MAGIC "GPURACE-LINKED\0\0"
#define LINKED_HEADER_BYTES (sizeof LINKED_MAGIC - 1 + 2 * sizeof(uint64_t))

/* The bytes of `image`, which the driver is given without its length: a fatbinary container or a linked image
   says it, a cubin's headers place its last part, and PTX is NUL-terminated text. */
static size_t image_size(const uint8_t *image) {
    uint32_t magic;
    memcpy(&magic, image, 4);
    if (memcmp(image, LINKED_MAGIC, sizeof LINKED_MAGIC - 1) == 0) {
        uint64_t size;
        memcpy(&size, image + sizeof LINKED_MAGIC - 1, sizeof size);
        return size;
    }
    if (magic == FATBIN_MAGIC) {
        uint16_t header;
        uint64_t size;
        memcpy(&header, image + 6, 2);
        memcpy(&size, image + 8, 8);
        return header + size;
    }
    if (memcmp(image, ELFMAG, SELFMAG) == 0) {
        Elf64_Ehdr h;
        memcpy(&h, image, sizeof h);
        size_t end = h.e_shoff + (size_t)h.e_shnum * h.e_shentsize;
        size_t programs = h.e_phoff + (size_t)h.e_phnum * h.e_phentsize;
        if (programs > end) end = programs;
        for (unsigned i = 0; i < h.e_shnum; i++) {
            Elf64_Shdr s;
            memcpy(&s, image + h.e_shoff + (size_t)i * h.e_shentsize, sizeof s);
            if (s.sh_type != SHT_NOBITS && s.sh_offset + s.sh_size > end) end = s.sh_offset + s.sh_size;
        }
        return end;
    }
    return strlen((const char *)image) + 1;
}

typedef int (*module_load_fn)(const void *, const void *, size_t, const char *, const char *);

/* Module `*result`, made of `image` (read from `path`, or given by the program when NULL) by `call`. */
static CUresult load(void **result, const void *image, size_t size, const char *path, const char *call) {
    struct module *m = calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&m->lock, NULL);
    CUresult r = CALL_AS(call, RUNTIME("__cudaGpuraceModuleLoad", module_load_fn)(m, image, size, path, call));
    if (r) {
        free(m);
        return r;
    }
    *result = m;
    return CUDA_SUCCESS;
}

static const void *unwrap(const void *image) {
    uint32_t magic;
    memcpy(&magic, image, 4);
    return magic == FATBIN_WRAPPER_MAGIC ? ((const void *const *)image)[1] : image;
}

EXPORT CUresult cuModuleLoadData(void **module, const void *image) {
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    image = unwrap(image);
    return load(module, image, image_size(image), NULL, "cuModuleLoadData");
}

EXPORT CUresult cuModuleLoadFatBinary(void **module, const void *image) {
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    image = unwrap(image);
    return load(module, image, image_size(image), NULL, "cuModuleLoadFatBinary");
}

/* The bytes of file `path`, and a NUL after them (PTX text is then ended as cuModuleLoadData's is). */
static CUresult read_whole(const char *path, uint8_t **result, size_t *result_size) {
    FILE *f = fopen(path, "rb");
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    size_t size = 0, cap = 0;
    uint8_t *data = NULL;
    for (;;) {
        if (size + 65536 + 1 > cap) {
            cap = (size + 65536 + 1) * 2;
            uint8_t *grown = realloc(data, cap);
            if (!grown) {
                free(data), fclose(f);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            data = grown;
        }
        size_t n = fread(data + size, 1, 65536, f);
        size += n;
        if (n < 65536) break;
    }
    fclose(f);
    data[size] = 0;
    *result = data;
    *result_size = size;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoad(void **module, const char *path) {
    size_t size;
    uint8_t *data;
    if (!module || !path) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = read_whole(path, &data, &size);
    if (r) return r;
    r = load(module, data, size + 1, path, "cuModuleLoad");
    free(data);
    return r;
}

/* JIT options (CUjit_option) that change nothing the simulator does, and those that only report: the logs are
   empty, the wall time 0 (nothing is compiled for a GPU); any other option stops the program. */
enum {
    JIT_MAX_REGISTERS = 0, JIT_THREADS_PER_BLOCK = 1, JIT_WALL_TIME = 2, JIT_INFO_LOG_BUFFER = 3,
    JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4, JIT_ERROR_LOG_BUFFER = 5, JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    JIT_OPTIMIZATION_LEVEL = 7, JIT_TARGET_FROM_CUCONTEXT = 8, JIT_TARGET = 9, JIT_FALLBACK_STRATEGY = 10,
    JIT_GENERATE_DEBUG_INFO = 11, JIT_LOG_VERBOSE = 12, JIT_GENERATE_LINE_INFO = 13, JIT_CACHE_MODE = 14,
};

static void jit_options(unsigned count, const int *options, void **values, const char *call) {
    for (unsigned i = 0; i < count; i++) {
        switch (options[i]) {
        case JIT_INFO_LOG_BUFFER:
        case JIT_ERROR_LOG_BUFFER:
            for (unsigned j = 0; j < count; j++) /* an empty log, where the buffer has room for it */
                if (options[j] == options[i] + 1 && (uintptr_t)values[j] > 0 && values[i]) *(char *)values[i] = 0;
            break;
        case JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        case JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            break; /* set to the logs' length once the buffers are written */
        case JIT_WALL_TIME: {
            float zero = 0;
            memcpy(&values[i], &zero, sizeof zero);
            break;
        }
        case JIT_MAX_REGISTERS: case JIT_THREADS_PER_BLOCK: case JIT_OPTIMIZATION_LEVEL:
        case JIT_TARGET_FROM_CUCONTEXT: case JIT_TARGET: case JIT_FALLBACK_STRATEGY: case JIT_GENERATE_DEBUG_INFO:
        case JIT_LOG_VERBOSE: case JIT_GENERATE_LINE_INFO: case JIT_CACHE_MODE:
            break;
        default: {
            char what[96];
            snprintf(what, sizeof what, "%s with JIT option %d", call, options[i]);
            unsupported(what);
        }
        }
    }
    for (unsigned i = 0; i < count; i++)
        if (options[i] == JIT_INFO_LOG_BUFFER_SIZE_BYTES || options[i] == JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            values[i] = NULL; /* the logs are empty */
}

EXPORT CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned int count, int *options,
                                   void **values) {
    if (!module || !image || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    jit_options(count, options, values, "cuModuleLoadDataEx");
    image = unwrap(image);
    return load(module, image, image_size(image), NULL, "cuModuleLoadDataEx");
}

/* A link (cuLinkCreate ... cuLinkComplete). Of one input, the linked image cuLinkComplete hands back is that
   PTX, cubin or fatbinary; of several, it is a linked image (LINKED_MAGIC) that holds them all, which the server
   links when a module is loaded from it, as separate compilation links (runtime/module_images.py). `entries`
   are the inputs as the linked image lays them out: per input, the length of its name, its name, its size and
   its bytes, a NUL after them (PTX text, ended). */
struct link {
    uint8_t *entries;
    size_t size, count, first_data; /* first_data: where the first input's bytes are in `entries` */
    uint8_t *image;                 /* the linked image of several inputs, once complete */
};

enum { JIT_INPUT_CUBIN = 0, JIT_INPUT_PTX = 1, JIT_INPUT_FATBINARY = 2 };

EXPORT CUresult cuLinkCreate_v2(unsigned int count, int *options, void **values, void **state) {
    if (!state || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    jit_options(count, options, values, "cuLinkCreate");
    struct link *l = calloc(1, sizeof *l);
    if (!l) return CUDA_ERROR_OUT_OF_MEMORY;
    *state = l;
    return CUDA_SUCCESS;
}

/* Append `size` bytes at `data` to `l`'s entries. */
static int link_append(struct link *l, const void *data, size_t size) {
    uint8_t *grown = realloc(l->entries, l->size + size);
    if (!grown) return 0;
    memcpy(grown + l->size, data, size);
    l->entries = grown;
    l->size += size;
    return 1;
}

EXPORT CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name, unsigned int count,
                                 int *options, void **values) {
    struct link *l = state;
    if (!l || !data || !size || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    jit_options(count, options, values, "cuLinkAddData");
    if (type != JIT_INPUT_CUBIN && type != JIT_INPUT_PTX && type != JIT_INPUT_FATBINARY) {
        char what[96];
        snprintf(what, sizeof what, "cuLinkAddData of input type %d (gpurace links PTX, cubins and fatbinaries)", type);
        unsupported(what);
    }
    uint32_t name_bytes = name ? (uint32_t)strlen(name) : 0;
    uint64_t data_bytes = size + 1;
    const uint8_t nul = 0;
    size_t data_at = l->size + sizeof name_bytes + name_bytes + sizeof data_bytes;
    if (!link_append(l, &name_bytes, sizeof name_bytes) || !link_append(l, name, name_bytes) ||
        !link_append(l, &data_bytes, sizeof data_bytes) || !link_append(l, data, size) || !link_append(l, &nul, 1))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (l->count++ == 0) l->first_data = data_at;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkAddFile_v2(void *state, int type, const char *path, unsigned int count, int *options,
                                 void **values) {
    size_t size;
    uint8_t *data;
    if (!state || !path) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = read_whole(path, &data, &size);
    if (r) return r;
    r = cuLinkAddData_v2(state, type, data, size, path, count, options, values);
    free(data);
    return r;
}

EXPORT CUresult cuLinkComplete(void *state, void **image, size_t *size) {
    struct link *l = state;
    if (!l || !image || !size || !l->count) return CUDA_ERROR_INVALID_VALUE;
    if (l->count == 1) {
        *image = l->entries + l->first_data;
        *size = l->size - l->first_data;
        return CUDA_SUCCESS;
    }
    uint64_t header[2] = {LINKED_HEADER_BYTES + l->size, l->count};
    free(l->image);
    if (!(l->image = malloc(header[0]))) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(l->image, LINKED_MAGIC, sizeof LINKED_MAGIC - 1);
    memcpy(l->image + sizeof LINKED_MAGIC - 1, header, sizeof header);
    memcpy(l->image + LINKED_HEADER_BYTES, l->entries, l->size);
    *image = l->image;
    *size = header[0];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkDestroy(void *state) {
    struct link *l = state;
    if (!l) return CUDA_ERROR_INVALID_VALUE;
    free(l->entries);
    free(l->image);
    free(l);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(void *module) {
    if (!module) return CUDA_ERROR_INVALID_HANDLE;
    struct module *m = module;
    CUresult r = CALL(RUNTIME("__cudaGpuraceModuleUnload", int (*)(const void *))(module));
    /* the module's CUfunctions stay allocated: the runtime keeps them as it keeps a stub, and a launch through
       one now fails with CUDA_ERROR_INVALID_HANDLE */
    pthread_mutex_lock(&m->lock);
    m->unloaded = 1;
    pthread_mutex_unlock(&m->lock);
    return r;
}

EXPORT CUresult cuModuleGetFunction(void **result, void *module, const char *name) {
    if (!result || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!module) return CUDA_ERROR_INVALID_HANDLE;
    struct module *m = module;
    pthread_mutex_lock(&m->lock);
    if (m->unloaded) {
        pthread_mutex_unlock(&m->lock);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    struct function *f = m->functions;
    while (f && strcmp(f->name, name) != 0) f = f->next;
    CUresult r = CUDA_SUCCESS;
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f || !(f->name = strdup(name))) {
            pthread_mutex_unlock(&m->lock);
            free(f);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        r = CALL(RUNTIME("__cudaGpuraceModuleFunction", int (*)(const void *, const void *, const char *))(m, f, name));
        if (r == CUDA_SUCCESS) {
            f->next = m->functions;
            m->functions = f;
        } else {
            free(f->name), free(f);
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (r) return r == CUDA_ERROR_INVALID_HANDLE ? CUDA_ERROR_NOT_FOUND : r;
    *result = f;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *address, size_t *bytes, void *module, const char *name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    if (!module || ((struct module *)module)->unloaded) return CUDA_ERROR_INVALID_HANDLE;
    typedef int (*global_fn)(const void *, const char *, CUdeviceptr *, size_t *);
    return CALL(RUNTIME("__cudaGpuraceModuleGlobal", global_fn)(module, name, address, bytes));
}

EXPORT CUresult cuLaunchKernel(void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                               unsigned block_y, unsigned block_z, unsigned shared, CUstream stream, void **params,
                               void **extra) {
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    typedef int (*launch_fn)(const void *, dim3, dim3, size_t, void *, void **, void **);
    dim3 grid = {grid_x, grid_y, grid_z}, block = {block_x, block_y, block_z};
    return CALL(RUNTIME("__cudaGpuraceLaunchDriver", launch_fn)(function, grid, block, shared, stream, params, extra));
}

EXPORT CUresult cuLaunchCooperativeKernel(void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                          unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared,
                                          CUstream stream, void **params) {
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    typedef int (*launch_fn)(const void *, dim3, dim3, void **, size_t, void *);
    dim3 grid = {grid_x, grid_y, grid_z}, block = {block_x, block_y, block_z};
    return CALL(RUNTIME("cudaLaunchCooperativeKernel", launch_fn)(function, grid, block, params, shared, stream));
}

/* cuLaunchKernelEx's configuration; its attributes (CUlaunchAttribute) are cudaLaunchAttribute's, ids and
   layout, and so go to cudaLaunchKernelEx as they are, which honours or refuses each. */
typedef struct {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared;
    CUstream stream;
    void *attributes;
    unsigned nattributes;
} launch_config;

/* The same configuration as the runtime's cudaLaunchConfig_t. */
typedef struct {
    dim3 grid, block;
    size_t shared;
    void *stream, *attributes;
    unsigned nattributes;
} runtime_launch_config;

static runtime_launch_config runtime_config_of(const launch_config *config) {
    runtime_launch_config r = {{config->grid_x, config->grid_y, config->grid_z},
                               {config->block_x, config->block_y, config->block_z},
                               config->shared,
                               config->stream,
                               config->attributes,
                               config->nattributes};
    return r;
}

EXPORT CUresult cuLaunchKernelEx(const launch_config *config, void *function, void **params, void **extra) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    runtime_launch_config runtime_config = runtime_config_of(config);
    typedef int (*launch_ex_fn)(const void *, const void *, void **, void **);
    return CALL(RUNTIME("__cudaGpuraceLaunchDriverEx", launch_ex_fn)(&runtime_config, function, params, extra));
}

EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *bytes, void *function, int blocks, int block_size) {
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    typedef int (*available_fn)(size_t *, const void *, int, int);
    return CALL(RUNTIME("cudaOccupancyAvailableDynamicSMemPerBlock", available_fn)(bytes, function, blocks, block_size));
}

/* Cluster occupancy: the runtime's answer for the same configuration. */
typedef int (*cluster_occupancy_fn)(int *, const void *, const runtime_launch_config *);

EXPORT CUresult cuOccupancyMaxActiveClusters(int *clusters, void *function, const launch_config *config) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    runtime_launch_config runtime_config = runtime_config_of(config);
    return CALL(RUNTIME("cudaOccupancyMaxActiveClusters", cluster_occupancy_fn)(clusters, function, &runtime_config));
}

EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *size, void *function, const launch_config *config) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    runtime_launch_config runtime_config = runtime_config_of(config);
    return CALL(RUNTIME("cudaOccupancyMaxPotentialClusterSize", cluster_occupancy_fn)(size, function, &runtime_config));
}

/* CUfunction_attribute: the first ten, read from cudaFuncAttributes (size_t sharedSizeBytes, constSizeBytes,
   localSizeBytes, then int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA,
   maxDynamicSharedSizeBytes, preferredShmemCarveout). */
EXPORT CUresult cuFuncGetAttribute(int *value, int attribute, void *function) {
    struct {
        size_t shared, constant, local;
        int ints[7];
        char rest[256];
    } a;
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = CALL(RUNTIME("cudaFuncGetAttributes", int (*)(void *, const void *))(&a, function));
    if (r) return r;
    switch (attribute) {
    case 1: *value = (int)a.shared; break;
    case 2: *value = (int)a.constant; break;
    case 3: *value = (int)a.local; break;
    case 0: case 4: case 5: case 6: case 7: case 8: case 9: *value = a.ints[attribute == 0 ? 0 : attribute - 3]; break;
    default: {
        char what[96];
        snprintf(what, sizeof what, "cuFuncGetAttribute of attribute %d", attribute);
        unsupported(what);
    }
    }
    return CUDA_SUCCESS;
}

/* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (8) and _PREFERRED_SHARED_MEMORY_CARVEOUT (9) are
   cudaFuncAttribute's numbers too. */
EXPORT CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    return CALL(RUNTIME("cudaFuncSetAttribute", int (*)(const void *, int, int))(function, attribute, value));
}

EXPORT CUresult cuFuncSetCacheConfig(void *function, int config) {
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    return CALL(RUNTIME("cudaFuncSetCacheConfig", int (*)(const void *, int))(function, config));
}

/* Occupancy: the runtime's answer for one block size, and the block size of the highest occupancy in threads
   (the largest of equals), tried from the largest allowed down by warps, as CUDA's own search goes; its flags
   are the runtime's. `dynamic_shared` gives the dynamic shared memory of a block size, else `shared` is it. */
typedef size_t (*block_to_shared_fn)(int);

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, void *function, int block_size,
                                                                     size_t shared, unsigned int flags) {
    typedef int (*occupancy_fn)(int *, const void *, int, size_t, unsigned);
    return CALL(RUNTIME("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", occupancy_fn)(
        blocks, function, block_size, shared, flags));
}

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *function, int block_size,
                                                            size_t shared) {
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, function, block_size, shared, 0);
}

enum { ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1, ATTRIBUTE_WARP_SIZE = 10, ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
       ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39, FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0 };

EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block_size, void *function,
                                                          block_to_shared_fn dynamic_shared, size_t shared,
                                                          int limit, unsigned int flags) {
    int per_sm, warp, device_max, sms, function_max;
    if (!min_grid || !block_size || !function) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuDeviceGetAttribute(&per_sm, ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 0);
    if (!r) r = cuDeviceGetAttribute(&warp, ATTRIBUTE_WARP_SIZE, 0);
    if (!r) r = cuDeviceGetAttribute(&device_max, ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0);
    if (!r) r = cuDeviceGetAttribute(&sms, ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    if (!r) r = cuFuncGetAttribute(&function_max, FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    if (r) return r;
    if (limit == 0 || limit > device_max) limit = device_max;
    if (limit > function_max) limit = function_max;
    int best_size = 0, best_blocks = 0, best_threads = 0;
    for (int aligned = (limit + warp - 1) / warp * warp; aligned > 0; aligned -= warp) {
        int size = aligned < limit ? aligned : limit, blocks;
        r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, function, size,
                                                                 dynamic_shared ? dynamic_shared(size) : shared, flags);
        if (r) return r;
        if (size * blocks > best_threads) best_size = size, best_blocks = blocks, best_threads = size * blocks;
        if (best_threads == per_sm) break;
    }
    *min_grid = best_blocks * sms;
    *block_size = best_size;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block_size, void *function,
                                                 block_to_shared_fn dynamic_shared, size_t shared, int limit) {
    return cuOccupancyMaxPotentialBlockSizeWithFlags(min_grid, block_size, function, dynamic_shared, shared, limit, 0);
}

/* ------------------------------------------------------------------------ */
/* Streams and events (their flags are the runtime's)                        */
/* ------------------------------------------------------------------------ */

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
    return CALL(RUNTIME("cudaStreamCreateWithFlags", int (*)(CUstream *, unsigned))(stream, flags));
}
EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
    return CALL(RUNTIME("cudaStreamDestroy", int (*)(CUstream))(stream));
}
EXPORT CUresult cuStreamSynchronize(CUstream stream) {
    return CALL(RUNTIME("cudaStreamSynchronize", int (*)(CUstream))(stream));
}
EXPORT CUresult cuStreamQuery(CUstream stream) { return CALL(RUNTIME("cudaStreamQuery", int (*)(CUstream))(stream)); }
EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
    return CALL(RUNTIME("cudaStreamWaitEvent", int (*)(CUstream, CUevent, unsigned))(stream, event, flags));
}
EXPORT CUresult cuEventCreate(CUevent *event, unsigned int flags) {
    return CALL(RUNTIME("cudaEventCreateWithFlags", int (*)(CUevent *, unsigned))(event, flags));
}
EXPORT CUresult cuEventDestroy_v2(CUevent event) { return CALL(RUNTIME("cudaEventDestroy", int (*)(CUevent))(event)); }
EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
    return CALL(RUNTIME("cudaEventRecord", int (*)(CUevent, CUstream))(event, stream));
}
EXPORT CUresult cuEventSynchronize(CUevent event) {
    return CALL(RUNTIME("cudaEventSynchronize", int (*)(CUevent))(event));
}
EXPORT CUresult cuEventQuery(CUevent event) { return CALL(RUNTIME("cudaEventQuery", int (*)(CUevent))(event)); }
EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end) {
    return CALL(RUNTIME("cudaEventElapsedTime", int (*)(float *, CUevent, CUevent))(ms, start, end));
}
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) { return cuEventElapsedTime_v2(ms, start, end); }

/* ------------------------------------------------------------------------ */
/* Per-thread default streams: a program built with `--default-stream per-thread` calls the _ptsz (asynchronous)
   and _ptds (synchronous) forms, in which stream 0 is the calling thread's default stream, CU_STREAM_PER_THREAD
   (the runtime's cudaStreamPerThread, the same handle) */
/* ------------------------------------------------------------------------ */

#define STREAM_PER_THREAD ((CUstream)2)
#define PER_THREAD(stream) ((stream) ? (stream) : STREAM_PER_THREAD)

EXPORT CUresult cuLaunchKernel_ptsz(void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                    unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared,
                                    CUstream stream, void **params, void **extra) {
    return cuLaunchKernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared, PER_THREAD(stream),
                          params, extra);
}
EXPORT CUresult cuLaunchCooperativeKernel_ptsz(void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                               unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared,
                                               CUstream stream, void **params) {
    return cuLaunchCooperativeKernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared,
                                     PER_THREAD(stream), params);
}
EXPORT CUresult cuLaunchKernelEx_ptsz(const launch_config *config, void *function, void **params, void **extra) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    launch_config own = *config;
    own.stream = PER_THREAD(own.stream);
    return cuLaunchKernelEx(&own, function, params, extra);
}
EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
    return cuMemcpyHtoDAsync_v2(dst, src, bytes, PER_THREAD(stream));
}
EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return cuMemcpyDtoHAsync_v2(dst, src, bytes, PER_THREAD(stream));
}
EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return cuMemcpyDtoDAsync_v2(dst, src, bytes, PER_THREAD(stream));
}
EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return cuMemcpyAsync(dst, src, bytes, PER_THREAD(stream));
}
EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const void *copy, CUstream stream) {
    return cuMemcpy2DAsync_v2(copy, PER_THREAD(stream));
}
EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
    return cuMemsetD8Async(dst, value, count, PER_THREAD(stream));
}
EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
    return cuMemsetD16Async(dst, value, count, PER_THREAD(stream));
}
EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
    return cuMemsetD32Async(dst, value, count, PER_THREAD(stream));
}
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) { return cuStreamSynchronize(PER_THREAD(stream)); }
EXPORT CUresult cuStreamQuery_ptsz(CUstream stream) { return cuStreamQuery(PER_THREAD(stream)); }
EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags) {
    return cuStreamWaitEvent(PER_THREAD(stream), event, flags);
}
EXPORT CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) { return cuEventRecord(event, PER_THREAD(stream)); }

/* The synchronous forms: the copy or memset runs on the thread's default stream, and the host waits for it as
   for the legacy form's. */
EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t bytes) {
    return copy(PTR(dst), src, bytes, MEMCPY_HOST_TO_DEVICE, 1, __func__);
}
EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t bytes) {
    return copy(dst, PTR(src), bytes, MEMCPY_DEVICE_TO_HOST, 1, __func__);
}
EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return copy(PTR(dst), PTR(src), bytes, MEMCPY_DEVICE_TO_DEVICE, 1, __func__);
}
EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return copy(PTR(dst), PTR(src), bytes, MEMCPY_DEFAULT, 1, __func__);
}
EXPORT CUresult cuMemcpy2D_v2_ptds(const void *copy) {
    return CALL(RUNTIME("__cudaGpuraceCuMemcpy2D", memcpy2d_fn)(copy, STREAM_PER_THREAD, SYNC));
}
EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const void *copy) {
    return CALL(RUNTIME("__cudaGpuraceCuMemcpy2D", memcpy2d_fn)(copy, STREAM_PER_THREAD, SYNC));
}
EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char value, size_t count) {
    return fill(dst, value, 1, count, STREAM_PER_THREAD, SYNC, __func__);
}
EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short value, size_t count) {
    return fill(dst, value, 2, count, STREAM_PER_THREAD, SYNC, __func__);
}
EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int value, size_t count) {
    return fill(dst, value, 4, count, STREAM_PER_THREAD, SYNC, __func__);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define DRIVER_ERROR(number, text) \
    case number:                   \
        *name = #text;             \
        return CUDA_SUCCESS;
#include "driver_errors.h"
#undef DRIVER_ERROR
    }
    *name = NULL; /* as the driver answers a number that is no CUresult */
    return CUDA_ERROR_INVALID_VALUE;
}

/* The driver's description of a result: the runtime's, for the results whose numbers both APIs share; of any
   other result the description is not known here, and asking for it stops the program rather than print a
   wrong one. */
EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
    const char *name;
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    if (cuGetErrorName(error, &name) != CUDA_SUCCESS) {
        *text = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *text = RUNTIME("__cudaGpuraceErrorString", const char *(*)(int))(error);
    if (*text) return CUDA_SUCCESS;
    char what[96];
    snprintf(what, sizeof what, "cuGetErrorString of %s", name);
    unsupported(what);
}

typedef CUresult (*encode_tiled_fn)(void *, int, unsigned int, void *, const unsigned long long *,
                                    const unsigned long long *, const unsigned int *, const unsigned int *, int, int,
                                    int, int);

EXPORT CUresult cuTensorMapEncodeTiled(void *map, int data_type, unsigned int rank, void *address,
                                       const unsigned long long *dims, const unsigned long long *strides,
                                       const unsigned int *box, const unsigned int *element_strides, int interleave,
                                       int swizzle, int l2_promotion, int fill) {
    int (*entry_point)(const char *, void **, unsigned long long, int *) =
        RUNTIME("cudaGetDriverEntryPoint", int (*)(const char *, void **, unsigned long long, int *));
    void *fn = NULL;
    entry_point("cuTensorMapEncodeTiled", &fn, 0, NULL);
    return ((encode_tiled_fn)fn)(map, data_type, rank, address, dims, strides, box, element_strides, interleave,
                                 swizzle, l2_promotion, fill);
}

/* NVIDIA's private tables of driver entry points, which its own libraries ask for (NVRTC does, and goes on
   without them). gpurace's driver has none: every table is not supported, as a driver answers a table it lacks. */
EXPORT CUresult cuGetExportTable(const void **table, const void *id) {
    (void)id;
    if (table) *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

#include "driver_virtual_memory.h"
#include "driver_graphs.h"
#include "driver_graph_memory.h"

#define UNSUPPORTED(name) \
    EXPORT void name(void) { unsupported(#name); }
#include "driver_calls.h"
