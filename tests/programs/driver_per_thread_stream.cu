// A driver-API program built with --default-stream=per-thread, so that cuda.h sends its calls to the _ptds
// (synchronous) and _ptsz (asynchronous) forms, in which stream 0 is the thread's own default stream: a
// memset and a copy through them, an asynchronous memset on stream 0 waited for with cuStreamSynchronize(0),
// and a copy past the end of the block, reported at its line.
// @nvcc_flags -lcuda --default-stream=per-thread
// @stdout words 07070707 07070707, then 00000009
// @stdout past end: CUDA_ERROR_INVALID_VALUE
// @exit 1
// @expect out-of-bounds 31
#include <cstdio>
#include <cuda.h>

int main() {
    CUdevice device;
    CUcontext context;
    cuInit(0);
    cuDeviceGet(&device, 0);
    cuDevicePrimaryCtxRetain(&context, device);
    CUdeviceptr block;
    unsigned int words[16];
    cuMemAlloc(&block, sizeof words);
    cuMemsetD8(block, 7, sizeof words);
    cuMemcpyDtoH(words, block, sizeof words);
    printf("words %08x %08x, ", words[0], words[15]);
    cuMemsetD32Async(block, 9, 16, 0);
    cuStreamSynchronize(0);
    cuMemcpyDtoH(words, block, sizeof words);
    printf("then %08x\n", words[3]);
    const char *name;
    unsigned int more[17] = {};
    cuGetErrorName(cuMemcpyHtoD(block, more, sizeof more), &name);
    printf("past end: %s\n", name);
    cuMemFree(block);
    cuDevicePrimaryCtxRelease(device);
    return 0;
}
