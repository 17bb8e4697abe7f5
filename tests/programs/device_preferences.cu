// Preferences that change nothing simulated are accepted and read back: the device's cache configuration, the
// shared memory bank size (four bytes, as on every GPU since Volta), a kernel's bank size preference;
// cudaChooseDevice picks the one device and cudaInitDevice initialises it. A preference out of range is
// cudaErrorInvalidValue, and so is a kernel preference for something that is no kernel
// (cudaErrorInvalidDeviceFunction). The kernel then runs as always.
// @stdout cache config 2, bank size 1
// @stdout chosen 0, init cudaSuccess, init device 1: cudaErrorInvalidDevice
// @stdout bad cache config: cudaErrorInvalidValue, not a kernel: cudaErrorInvalidDeviceFunction
// @stdout x[5] = 5
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void iota(int *x) { x[threadIdx.x] = threadIdx.x; }

int main() {
    cudaDeviceSetCacheConfig(cudaFuncCachePreferL1);
    cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte);
    cudaFuncSetSharedMemConfig(iota, cudaSharedMemBankSizeFourByte);
    cudaFuncCache cache;
    cudaSharedMemConfig banks;
    cudaDeviceGetCacheConfig(&cache);
    cudaDeviceGetSharedMemConfig(&banks);
    printf("cache config %d, bank size %d\n", (int)cache, (int)banks);

    cudaDeviceProp want = {};
    want.major = 7;
    int chosen = -1;
    cudaChooseDevice(&chosen, &want);
    cudaError_t init = cudaInitDevice(0, cudaDeviceScheduleAuto, 0);
    cudaError_t init1 = cudaInitDevice(1, 0, 0);
    printf("chosen %d, init %s, init device 1: %s\n", chosen, cudaGetErrorName(init), cudaGetErrorName(init1));
    cudaError_t bad = cudaDeviceSetCacheConfig((cudaFuncCache)7);
    cudaError_t not_kernel = cudaFuncSetSharedMemConfig((const void *)&chosen, cudaSharedMemBankSizeFourByte);
    printf("bad cache config: %s, not a kernel: %s\n", cudaGetErrorName(bad), cudaGetErrorName(not_kernel));
    cudaGetLastError();

    int *x, h[32];
    cudaMalloc(&x, sizeof h);
    iota<<<1, 32>>>(x);
    cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
    printf("x[5] = %d\n", h[5]);
    cudaFree(x);
    return 0;
}
