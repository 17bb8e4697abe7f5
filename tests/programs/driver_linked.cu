// A program that links the CUDA driver (-lcuda) beside the runtime, starts it and asks its version and
// device, then works through the runtime: gpurace's libcuda.so.1 answers those calls (a second device
// does not exist, and the error is named and described as the driver does), and the runtime's launch
// and copies run as they would without the driver.
// @nvcc_flags -lcuda
// @stdout driver 13000, 1 device, device 0
// @stdout device 1: CUDA_ERROR_INVALID_DEVICE (invalid device ordinal)
// @stdout sum 992
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>
#include <cuda.h>

__global__ void twice(int *out) {
    out[threadIdx.x] = 2 * threadIdx.x;
}

int main() {
    int version = 0, count = 0;
    CUdevice device = -1;
    if (cuInit(0) != CUDA_SUCCESS || cuDriverGetVersion(&version) != CUDA_SUCCESS ||
        cuDeviceGetCount(&count) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS)
        return 5;
    printf("driver %d, %d device, device %d\n", version, count, device);
    CUresult second = cuDeviceGet(&device, 1);
    const char *name, *text;
    if (cuGetErrorName(second, &name) != CUDA_SUCCESS || cuGetErrorString(second, &text) != CUDA_SUCCESS)
        return 6;
    printf("device 1: %s (%s)\n", name, text);
    int *out, host[32], sum = 0;
    cudaMalloc(&out, sizeof(host));
    twice<<<1, 32>>>(out);
    cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 32; i++)
        sum += host[i];
    printf("sum %d\n", sum);
    cudaFree(out);
    return 0;
}
