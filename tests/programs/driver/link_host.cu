// A driver-API program (built with -lcuda) that links two images at run time, its first two arguments (PTX, a
// cubin or a fatbinary, told by their names' ends): the first with cuLinkAddFile, the second with cuLinkAddData
// of its bytes. It loads the linked image, reads the variable `offset` one input defines and launches the
// kernel its third argument names (`sum_plain` or `sum_atomic`), which calls a function of the other input;
// it prints the variable and, of `sum_atomic`, the sum (tests/runtime/test_driver_api.py).
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <vector>

#include "check.h"

static CUjitInputType input_type(const char *path) {
    const char *dot = strrchr(path, '.');
    if (dot && strcmp(dot, ".cubin") == 0) return CU_JIT_INPUT_CUBIN;
    if (dot && strcmp(dot, ".fatbin") == 0) return CU_JIT_INPUT_FATBINARY;
    return CU_JIT_INPUT_PTX;
}

static std::vector<char> read_file(const char *path) {
    std::vector<char> bytes;
    FILE *f = fopen(path, "rb");
    if (!f) return bytes;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, f)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
    fclose(f);
    return bytes;
}

int main(int argc, char **argv) {
    if (argc != 4) return 4;
    CUdevice device;
    CUcontext context;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuCtxCreate(&context, nullptr, 0, device));
    CUlinkState link;
    void *linked;
    size_t linked_bytes;
    CHECK(cuLinkCreate(0, nullptr, nullptr, &link));
    CHECK(cuLinkAddFile(link, input_type(argv[1]), argv[1], 0, nullptr, nullptr));
    std::vector<char> second = read_file(argv[2]);
    CHECK(cuLinkAddData(link, input_type(argv[2]), second.data(), second.size(), "helpers", 0, nullptr, nullptr));
    CHECK(cuLinkComplete(link, &linked, &linked_bytes));
    CUmodule module;
    CHECK(cuModuleLoadData(&module, linked));
    CHECK(cuLinkDestroy(link));

    CUdeviceptr offset;
    int host_offset;
    CHECK(cuModuleGetGlobal(&offset, nullptr, module, "offset"));
    CHECK(cuMemcpyDtoH(&host_offset, offset, sizeof host_offset));
    printf("offset: %d\n", host_offset);

    CUfunction sum;
    CHECK(cuModuleGetFunction(&sum, module, argv[3]));
    const int n = 64;
    int in[n], total = 0;
    for (int i = 0; i < n; i++) in[i] = i;
    CUdeviceptr device_in, device_total;
    CHECK(cuMemAlloc(&device_in, sizeof in));
    CHECK(cuMemAlloc(&device_total, sizeof total));
    CHECK(cuMemcpyHtoD(device_in, in, sizeof in));
    CHECK(cuMemcpyHtoD(device_total, &total, sizeof total));
    int count = n;
    void *args[] = {&device_total, &device_in, &count};
    CHECK(cuLaunchKernel(sum, 1, 1, 1, n, 1, 1, 0, nullptr, args, nullptr));
    CHECK(cuMemcpyDtoH(&total, device_total, sizeof total));
    if (strcmp(argv[3], "sum_atomic") == 0) printf("sum: %d\n", total);
    CHECK(cuMemFree(device_in));
    CHECK(cuMemFree(device_total));
    CHECK(cuModuleUnload(module));
    CHECK(cuCtxDestroy(context));
    return 0;
}
