/* What gpurace's libcuda.so.1 (cuda_driver.c) asks of this runtime: the driver's modules, launches and memsets,
 * made of the runtime's own requests, and the error state the two APIs keep apart.
 *
 * The driver looks these functions up by name (they are not part of NVIDIA's runtime, so a program cannot link
 * them). A module the program loads is a handle the driver made; the server reads its image (MODULE_LOAD) and
 * knows its kernels, which are registered as a translation unit's are, their CUfunction handles standing for
 * the host stubs. Included by cudart.c.
 */

/* Called by the driver for a function it does not implement: the program stops, naming it. */
EXPORT void __cudaGpuraceUnsupportedDriverCall(const char *name) {
    char what[256];
    snprintf(what, sizeof what, "%.160s (a CUDA driver call)", name);
    unsupported(what, NULL);
}

/* The image of `size` bytes that `call` loads becomes module `module` (`path`: the file cuModuleLoad read). An
   image gpurace cannot run stops the program (the server says why). */
EXPORT cudaError_t __cudaGpuraceModuleLoad(const void *module, const void *image, size_t size, const char *path,
                                           const char *call) {
    if (size > UINT32_MAX) unsupported("a module image of 4 GiB or more", NULL);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)module);
    put_str(&b, path ? path : "");
    put_site(&b, call, NULL);
    put_u32(&b, (uint32_t)size);
    put(&b, image, size);
    return request(OP_MODULE_LOAD, &b, NULL);
}

EXPORT cudaError_t __cudaGpuraceModuleUnload(const void *module) {
    struct buf b = {0};
    put_u64(&b, (uintptr_t)module);
    return request(OP_MODULE_UNLOAD, &b, NULL);
}

/* NVRTC compiled `ptx` to the machine code `cubin` (`size` bytes) a program took (nvrtc_capture.c): a module the
   program loads from that cubin runs this PTX. */
EXPORT void __cudaGpuraceCompiledCode(const void *cubin, size_t size, const char *ptx) {
    if (size > UINT32_MAX || strlen(ptx) > UINT32_MAX) return; /* too large to send: its module load says so */
    struct buf b = {0};
    put_u32(&b, (uint32_t)size);
    put(&b, cubin, size);
    put_str(&b, ptx);
    request(OP_COMPILED_CODE, &b, NULL);
}

/* Kernel `name` of loaded module `module`, launched as `function` (cudaErrorInvalidDeviceFunction: none). */
EXPORT cudaError_t __cudaGpuraceModuleFunction(const void *module, const void *function, const char *name) {
    return register_function(module, function, name);
}

EXPORT cudaError_t __cudaGpuraceModuleGlobal(const void *module, const char *name, uint64_t *address, size_t *size) {
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, (uintptr_t)module);
    put_str(&b, name);
    cudaError_t status = request(OP_MODULE_GLOBAL, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        uint64_t a = get_u64(&p), n = get_u64(&p);
        if (address) *address = a;
        if (size) *size = (size_t)n;
    }
    free(reply);
    return status;
}

/* cuLaunchKernel's `extra`: CU_LAUNCH_PARAM_BUFFER_POINTER, then the packed parameters, CU_LAUNCH_PARAM_BUFFER_SIZE,
   then a pointer to their size, ended by CU_LAUNCH_PARAM_END. */
#define LAUNCH_PARAM_END ((void *)0)
#define LAUNCH_PARAM_BUFFER_POINTER ((void *)1)
#define LAUNCH_PARAM_BUFFER_SIZE ((void *)2)

/* The parameters of `function` packed in `extra`, as one pointer per parameter into the packed buffer (`*args`,
   which the caller frees): cudaErrorInvalidValue for an `extra` that does not hold them all. */
static cudaError_t unpack_parameters(const void *function, void **extra, void ***args) {
    const uint8_t *buffer = NULL;
    size_t *buffer_size = NULL;
    for (size_t i = 0; extra[i] != LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == LAUNCH_PARAM_BUFFER_POINTER)
            buffer = extra[i + 1];
        else if (extra[i] == LAUNCH_PARAM_BUFFER_SIZE)
            buffer_size = extra[i + 1];
        else
            return cudaErrorInvalidValue;
    }
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = find_kernel(function);
    pthread_mutex_unlock(&rt.lock);
    if (!k) return cudaErrorInvalidDeviceFunction;
    if (k->nparams && (!buffer || !buffer_size)) return cudaErrorInvalidValue;
    *args = calloc(k->nparams + 1, sizeof(void *));
    if (!*args) die("%s", "out of host memory");
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (k->offsets[i] + k->sizes[i] > *buffer_size) {
            free(*args);
            return cudaErrorInvalidValue;
        }
        (*args)[i] = (void *)(buffer + k->offsets[i]);
    }
    return cudaSuccess;
}

/* A launch of `function` with its parameters as cuLaunchKernel takes them: `params` (one pointer per
   parameter), or packed in one buffer described by `extra`. */
EXPORT cudaError_t __cudaGpuraceLaunchDriver(const void *function, dim3 grid, dim3 block, size_t shared,
                                             void *stream, void **params, void **extra) {
    if (!extra) return launch(function, grid, block, params, shared, stream);
    if (params) return cudaErrorInvalidValue;
    void **args;
    cudaError_t status = unpack_parameters(function, extra, &args);
    if (status != cudaSuccess) return status;
    status = launch(function, grid, block, args, shared, stream);
    free(args);
    return status;
}

/* cuLaunchKernelEx: `config` is the runtime's cudaLaunchConfig_t, the parameters are as cuLaunchKernel's. */
EXPORT cudaError_t __cudaGpuraceLaunchDriverEx(const struct launch_config *config, const void *function, void **params,
                                               void **extra) {
    if (!extra) return cudaLaunchKernelExC(config, function, params);
    if (params) return cudaErrorInvalidValue;
    void **args;
    cudaError_t status = unpack_parameters(function, extra, &args);
    if (status != cudaSuccess) return status;
    status = cudaLaunchKernelExC(config, function, args);
    free(args);
    return status;
}

/* cuMemsetD8/D16/D32 (element 1, 2 or 4 bytes) of `count` elements, on `stream` (`async`: the Async variant). */
EXPORT cudaError_t __cudaGpuraceFill(void *dst, uint32_t value, unsigned element, size_t count, void *stream,
                                     int async, const char *call) {
    return fill_elements(dst, count * element, value, element, count * element, 1, stream, async, call);
}

/* The driver call (`name`, as cuda.h spells it: `cuMemAlloc`) that the calling thread's runtime calls are
   made for from now on, NULL when they are the program's own; the previous one. */
EXPORT const char *__cudaGpuraceDriverCall(const char *name) {
    const char *old = driver_call;
    driver_call = name;
    return old;
}

/* The calling thread's last runtime error, replaced by `error`: a driver call made of runtime calls leaves the
   runtime's last error (cudaGetLastError) as it found it, as the two APIs keep theirs apart. */
EXPORT cudaError_t __cudaGpuraceSwapLastError(cudaError_t error) {
    cudaError_t old = last_error;
    last_error = error;
    return old;
}

/* The description of `error` (a cudaError_t, whose numbers the driver's results share where both have one), or
   NULL when this runtime does not know it. */
EXPORT const char *__cudaGpuraceErrorString(cudaError_t error) {
    return lookup(error_strings, sizeof error_strings / sizeof *error_strings, error);
}

/* The driver's virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap, ...): `action` (the server's
   VirtualAction) with its four numbers, made by `call`; `*result` is the address or handle it gives back. */
enum { OP_VIRTUAL_MEMORY = 43 };

EXPORT cudaError_t __cudaGpuraceVirtualMemory(uint32_t action, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                                              uint64_t *result, const char *call) {
    return numbers_request(OP_VIRTUAL_MEMORY, action, (const uint64_t[]){a, b, c, d}, 4, call, result);
}
