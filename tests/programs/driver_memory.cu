// A driver-API program's memory calls: 16- and 32-bit memsets fill whole elements; a copy one element past
// the end of a cuMemAlloc block is reported at its line, naming the driver's calls, and fails with
// CUDA_ERROR_INVALID_VALUE as the driver fails it; the block is never freed: a leak (--leak-check) at the
// line of its cuMemAlloc. The runtime's last error is not the driver's. The device reports a Turing part's
// texture limits and virtual memory management (driver_virtual_memory.cu).
// @nvcc_flags -lcuda
// @leak_check
// @stdout d16 0102 0102, d32 0a0b0c0d 0a0b0c0d
// @stdout past end: CUDA_ERROR_INVALID_VALUE, runtime: cudaSuccess
// @stdout 2D textures up to 131072 x 65536, virtual memory management 1
// @exit 1
// @expect out-of-bounds 34
// @expect leak 25
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

int main() {
    CUdevice device;
    CUcontext context;
    cuInit(0);
    cuDeviceGet(&device, 0);
    cuDevicePrimaryCtxRetain(&context, device);
    CUdeviceptr block;
    cuMemAlloc(&block, 16 * sizeof(int));
    unsigned short halves[8];
    unsigned int words[16];
    cuMemsetD16(block, 0x0102, 8);
    cuMemcpyDtoH(halves, block, sizeof halves);
    cuMemsetD32(block, 0x0a0b0c0du, 16);
    cuMemcpyDtoH(words, block, sizeof words);
    printf("d16 %04x %04x, d32 %08x %08x\n", halves[0], halves[7], words[0], words[15]);
    unsigned int more[17] = {};
    CUresult past = cuMemcpyHtoD(block, more, sizeof more);
    const char *name;
    cuGetErrorName(past, &name);
    printf("past end: %s, runtime: %s\n", name, cudaGetErrorName(cudaGetLastError()));
    int width, height, vmm;
    cuDeviceGetAttribute(&width, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, device);
    cuDeviceGetAttribute(&height, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, device);
    cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device);
    printf("2D textures up to %d x %d, virtual memory management %d\n", width, height, vmm);
    return 0;
}
