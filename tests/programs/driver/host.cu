// A program written against the CUDA driver API (built with -lcuda): it loads the module whose file is its
// first argument (kernels.cu built as PTX, a cubin or a fatbinary) in the way its second argument names
// (`load`: cuModuleLoad; `data`: cuModuleLoadData of the file's bytes; `link`: cuModuleLoadData of what
// cuLinkComplete makes of the file; `ex`: cuModuleLoadDataEx with JIT log options), sets the module's
// __device__ variable `bias`, launches `scale` with its parameters given one by one, packed into one buffer,
// through cuLaunchKernelEx (one by one and packed) and as a cooperative launch, checks the results, and
// launches the racy `total`. It prints what it checked, and the errors the driver gives for a kernel the
// module lacks and for a launch after the module was unloaded (tests/runtime/test_driver_api.py). With a
// third argument, `race-free`, it leaves out `total`.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <vector>

#include "check.h"

static const char *error_name(CUresult r) {
    const char *name;
    return cuGetErrorName(r, &name) == CUDA_SUCCESS ? name : "?";
}

static std::vector<char> read_file(const char *path) {
    std::vector<char> bytes;
    FILE *f = fopen(path, "rb");
    if (!f)
        return bytes;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, f)) > 0)
        bytes.insert(bytes.end(), buffer, buffer + n);
    fclose(f);
    bytes.push_back(0);
    return bytes;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4)
        return 4;
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CUctxCreateParams params = {};
    CHECK(cuCtxCreate(&context, &params, 0, device));
    std::vector<char> image = read_file(argv[1]);
    if (strcmp(argv[2], "load") == 0) {
        CHECK(cuModuleLoad(&module, argv[1]));
    } else if (strcmp(argv[2], "data") == 0) {
        CHECK(cuModuleLoadData(&module, image.data()));
    } else if (strcmp(argv[2], "link") == 0) {
        CUlinkState link;
        void *linked;
        size_t linked_bytes;
        CHECK(cuLinkCreate(0, nullptr, nullptr, &link));
        CHECK(cuLinkAddFile(link, CU_JIT_INPUT_PTX, argv[1], 0, nullptr, nullptr));
        CHECK(cuLinkComplete(link, &linked, &linked_bytes));
        CHECK(cuModuleLoadData(&module, linked));
        CHECK(cuLinkDestroy(link));
    } else {
        char log[256] = "unchanged";
        CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
        void *values[] = {log, (void *)(size_t)sizeof log, nullptr};
        CHECK(cuModuleLoadDataEx(&module, image.data(), 3, options, values));
        printf("log \"%s\", %zu bytes\n", log, (size_t)values[1]);
    }
    CUfunction scale, total, missing;
    CHECK(cuModuleGetFunction(&scale, module, "scale"));
    CHECK(cuModuleGetFunction(&total, module, "total"));
    printf("missing: %s\n", error_name(cuModuleGetFunction(&missing, module, "missing")));

    CUdeviceptr bias;
    size_t bias_bytes;
    CHECK(cuModuleGetGlobal(&bias, &bias_bytes, module, "bias"));
    int seven = 7;
    CHECK(cuMemcpyHtoD(bias, &seven, sizeof seven));
    printf("bias: %zu bytes\n", bias_bytes);

    const int n = 100;
    int host_in[n], host_out[n];
    for (int i = 0; i < n; i++)
        host_in[i] = i;
    CUdeviceptr in, out;
    CHECK(cuMemAlloc(&in, sizeof host_in));
    CHECK(cuMemAlloc(&out, sizeof host_out));
    CHECK(cuMemcpyHtoD(in, host_in, sizeof host_in));
    CHECK(cuMemsetD32(out, 0x01020304u, n));
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    printf("memset: %08x %08x\n", host_out[0], host_out[n - 1]);

    int factor = 3, count = n;
    void *args[] = {&out, &in, &factor, &count};
    CHECK(cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok = ok && host_out[i] == 3 * i + 7;
    printf("scale: %s\n", ok ? "ok" : "wrong");

    struct {
        CUdeviceptr out, in;
        int factor, n;
    } packed = {out, in, 2, n};
    size_t packed_bytes = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_bytes,
                     CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, extra));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    ok = true;
    for (int i = 0; i < n; i++)
        ok = ok && host_out[i] == 2 * i + 7;
    printf("packed: %s\n", ok ? "ok" : "wrong");

    factor = 4;
    CUlaunchConfig config = {2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0};
    CHECK(cuLaunchKernelEx(&config, scale, args, nullptr));
    factor = 5;
    CHECK(cuLaunchCooperativeKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, args));
    packed.factor = 6;
    CHECK(cuLaunchKernelEx(&config, scale, nullptr, extra));
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    ok = true;
    for (int i = 0; i < n; i++)
        ok = ok && host_out[i] == 6 * i + 7;
    printf("ex, cooperative and packed ex: %s\n", ok ? "ok" : "wrong");

    void *total_args[] = {&out, &in, &count};
    if (argc == 3)
        CHECK(cuLaunchKernel(total, 1, 1, 1, 64, 1, 1, 0, nullptr, total_args, nullptr));
    CHECK(cuMemFree(in));
    CHECK(cuMemFree(out));
    CHECK(cuModuleUnload(module));
    printf("after unload: %s\n", error_name(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr)));
    printf("function of an unloaded module: %s\n", error_name(cuModuleGetFunction(&missing, module, "total")));
    CHECK(cuCtxDestroy(context));
    return 0;
}
