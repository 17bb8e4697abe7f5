// A program that compiles its kernels at run time with NVRTC, as the driver-API samples do: it reads the kernel
// source (argv[1]: kernels.cu of this folder), compiles it for the device's architecture into machine code
// (argv[2] "cubin": nvrtcGetCUBIN) or PTX ("ptx": nvrtcGetPTX), loads the result with cuModuleLoadData and
// runs `scale` (checked against the host's answer) and then, unless argv[3] is "race-free", `total`, whose race
// is reported at its line of kernels.cu. Prints "scale: ok" and "total: launched".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <nvrtc.h>
#include "check.h"

#define NVRTC_CHECK(call)                                                    \
    do {                                                                     \
        nvrtcResult r_ = (call);                                             \
        if (r_ != NVRTC_SUCCESS) {                                           \
            printf("%s failed: %s\n", #call, nvrtcGetErrorString(r_));       \
            return 3;                                                        \
        }                                                                    \
    } while (0)

static std::string read_file(const char *path) {
    std::string text;
    FILE *f = fopen(path, "rb");
    if (!f) return text;
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) text.append(chunk, n);
    fclose(f);
    return text;
}

int main(int argc, char **argv) {
    if (argc < 3) return 4;
    bool cubin = strcmp(argv[2], "cubin") == 0, race_free = argc > 3 && strcmp(argv[3], "race-free") == 0;
    std::string source = read_file(argv[1]);
    CUdevice device;
    CUcontext context;
    int major, minor;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));

    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s_%d%d", cubin ? "sm" : "compute", major, minor);
    const char *options[] = {arch};
    nvrtcProgram program;
    NVRTC_CHECK(nvrtcCreateProgram(&program, source.c_str(), argv[1], 0, NULL, NULL));
    NVRTC_CHECK(nvrtcCompileProgram(program, 1, options));
    size_t size;
    std::string image;
    if (cubin) {
        NVRTC_CHECK(nvrtcGetCUBINSize(program, &size));
        image.resize(size);
        NVRTC_CHECK(nvrtcGetCUBIN(program, &image[0]));
    } else {
        NVRTC_CHECK(nvrtcGetPTXSize(program, &size));
        image.resize(size);
        NVRTC_CHECK(nvrtcGetPTX(program, &image[0]));
    }
    NVRTC_CHECK(nvrtcDestroyProgram(&program));

    CUmodule module;
    CUfunction scale, total;
    CHECK(cuModuleLoadData(&module, image.data()));
    CHECK(cuModuleGetFunction(&scale, module, "scale"));
    CHECK(cuModuleGetFunction(&total, module, "total"));

    const int n = 64;
    int host_in[n], host_out[n];
    for (int i = 0; i < n; i++) host_in[i] = i;
    CUdeviceptr in, out;
    CHECK(cuMemAlloc(&in, sizeof host_in));
    CHECK(cuMemAlloc(&out, sizeof host_out));
    CHECK(cuMemcpyHtoD(in, host_in, sizeof host_in));
    int factor = 3, count = n;
    void *scale_args[] = {&out, &in, &factor, &count};
    CHECK(cuLaunchKernel(scale, 2, 1, 1, 32, 1, 1, 0, NULL, scale_args, NULL));
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    bool ok = true;
    for (int i = 0; i < n; i++) ok = ok && host_out[i] == 3 * i + 5;
    printf("scale: %s\n", ok ? "ok" : "wrong");
    if (!race_free) {
        void *total_args[] = {&out, &in, &count};
        CHECK(cuLaunchKernel(total, 2, 1, 1, 32, 1, 1, 0, NULL, total_args, NULL));
        CHECK(cuCtxSynchronize());
        printf("total: launched\n");
    }
    CHECK(cuMemFree(in));
    CHECK(cuMemFree(out));
    CHECK(cuModuleUnload(module));
    return 0;
}
