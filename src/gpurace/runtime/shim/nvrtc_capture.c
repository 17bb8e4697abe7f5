/*
 * gpurace's NVRTC capture (libgpurace_nvrtc.so, preloaded by `gpurace exec`): programs that compile their kernels
 * at run time with NVRTC and load the machine code (nvrtcGetCUBIN, then cuModuleLoadData) give the simulator
 * nothing it can run, since it runs PTX. NVRTC makes PTX on the way to machine code; this library, ahead of
 * NVIDIA's libnvrtc in the symbol search, hands that PTX to gpurace with each cubin a program takes, and the
 * module the program later loads from that cubin runs it (`runtime/module_images.py`).
 *
 * Each compile also asks for device line information (-lineinfo), as gpurace's own compiles do, so findings
 * name the program's kernel source lines; it changes no instruction. Everything else is NVIDIA's NVRTC, untouched:
 * the functions here forward to the next definition (RTLD_NEXT).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvrtcResult;
typedef void *nvrtcProgram;
enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_OUT_OF_MEMORY = 1 };

/* NVIDIA's definition of `name` (the next one after this library's); without one, the program stops. */
static void *next(const char *name) {
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "gpurace: %s: NVIDIA's NVRTC is not loaded in this program\n", name);
        _exit(2);
    }
    return fn;
}

#define NEXT(name, type)                              \
    ({                                                \
        static __typeof__(type) fn_;                  \
        if (!fn_) fn_ = (type)next(name);             \
        fn_;                                          \
    })

static int asks_line_info(int count, const char *const *options) {
    static const char *const given[] = {"-lineinfo", "--generate-line-info", "-G", "--device-debug"};
    for (int i = 0; i < count; i++)
        for (size_t j = 0; j < sizeof given / sizeof *given; j++)
            if (options[i] && strcmp(options[i], given[j]) == 0) return 1;
    return 0;
}

EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int count, const char *const *options) {
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *) =
        NEXT("nvrtcCompileProgram", nvrtcResult (*)(nvrtcProgram, int, const char *const *));
    if (count < 0 || (count > 0 && !options) || asks_line_info(count, options))
        return compile(program, count, options);
    const char **with = malloc(sizeof *with * ((size_t)count + 1));
    if (!with) return NVRTC_ERROR_OUT_OF_MEMORY;
    if (count) memcpy(with, options, sizeof *with * (size_t)count);
    with[count] = "-lineinfo";
    nvrtcResult status = compile(program, count + 1, with);
    free(with);
    return status;
}

/* The cubin the program takes, and the PTX NVRTC made it from, go to gpurace's runtime (when this program runs
   with it, which `gpurace exec` sees to); a program that never loads the cubin leaves it unused. */
EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram program, char *cubin) {
    nvrtcResult status = NEXT("nvrtcGetCUBIN", nvrtcResult (*)(nvrtcProgram, char *))(program, cubin);
    void (*record)(const void *, size_t, const char *) =
        (void (*)(const void *, size_t, const char *))dlsym(RTLD_DEFAULT, "__cudaGpuraceCompiledCode");
    size_t cubin_size = 0, ptx_size = 0;
    if (status != NVRTC_SUCCESS || !cubin || !record ||
        NEXT("nvrtcGetCUBINSize", nvrtcResult (*)(nvrtcProgram, size_t *))(program, &cubin_size) != NVRTC_SUCCESS ||
        NEXT("nvrtcGetPTXSize", nvrtcResult (*)(nvrtcProgram, size_t *))(program, &ptx_size) != NVRTC_SUCCESS)
        return status;
    char *ptx = malloc(ptx_size + 1);
    if (ptx && NEXT("nvrtcGetPTX", nvrtcResult (*)(nvrtcProgram, char *))(program, ptx) == NVRTC_SUCCESS) {
        ptx[ptx_size] = '\0';
        record(cubin, cubin_size, ptx);
    }
    free(ptx);
    return status;
}
