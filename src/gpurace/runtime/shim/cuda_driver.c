/*
 * gpurace's libcuda.so.1: the CUDA driver library, for programs that link it (`-lcuda`).
 *
 * Many programs link the driver beside the runtime without calling it, or call it only to start it, to
 * ask its version, or to encode a TMA tensor map. Those few calls are answered here, as the simulated
 * device's runtime answers their runtime counterparts; every other driver function stops the program,
 * naming itself and its host line, through gpurace's runtime (libcudart.so.13), which holds the
 * connection to gpurace. The runtime's functions are looked up by name at each call, not linked: a program
 * is linked against NVIDIA's runtime, which lacks gpurace's own entry, and runs with gpurace's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_DEVICE = 101 };

/* A function of the runtime loaded in this process; without gpurace's runtime, the program stops. */
static void *runtime(const char *name) {
    void *fn = dlsym(RTLD_DEFAULT, name);
    if (!fn || !dlsym(RTLD_DEFAULT, "__cudaGpuraceUnsupportedDriverCall")) {
        fprintf(stderr, "gpurace: this is gpurace's CUDA driver library: run this program with `gpurace exec`\n");
        _exit(2);
    }
    return fn;
}

static void __attribute__((noreturn)) unsupported(const char *name) {
    ((void (*)(const char *))runtime("__cudaGpuraceUnsupportedDriverCall"))(name);
    _exit(2); /* not reached: the runtime stops the program */
}

EXPORT CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

EXPORT CUresult cuDriverGetVersion(int *version) {
    int (*driver_get_version)(int *) = (int (*)(int *))runtime("cudaDriverGetVersion");
    return driver_get_version(version) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
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

/* The driver's descriptions of the results this library returns; of any other result the description is not
   known here, and asking for it stops the program rather than print a wrong one. */
EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS:
        *text = "no error";
        return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
        *text = "invalid argument";
        return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE:
        *text = "invalid device ordinal";
        return CUDA_SUCCESS;
    }
    char what[96];
    snprintf(what, sizeof what, "cuGetErrorString of CUresult %d", error);
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
        (int (*)(const char *, void **, unsigned long long, int *))runtime("cudaGetDriverEntryPoint");
    void *fn = NULL;
    entry_point("cuTensorMapEncodeTiled", &fn, 0, NULL);
    return ((encode_tiled_fn)fn)(map, data_type, rank, address, dims, strides, box, element_strides, interleave,
                                 swizzle, l2_promotion, fill);
}

#define UNSUPPORTED(name) \
    EXPORT void name(void) { unsupported(#name); }
#include "driver_calls.h"
