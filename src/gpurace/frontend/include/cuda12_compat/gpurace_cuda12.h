/*
 * gpurace's compatibility header for CUDA programs written for CUDA 12 or
 * earlier, pre-included in every CUDA program `gpurace exec` builds (its .cu
 * files: host-only C and C++ files are left exactly as they are).
 *
 * CUDA 13 removed the deprecated thread-management calls (cudaThreadSynchronize,
 * cudaThreadExit and the like, each the twin of a cudaDevice* call) and eight
 * cudaDeviceProp fields, which benchmark suites written for older CUDA (Rodinia
 * among them) still use, so their sources do not build with CUDA 13's headers.
 * This header defines the calls as their cudaDevice* twins (CUDA 12's libcudart
 * did the same) and, in C++, gives cudaDeviceProp back the removed fields, which
 * cudaGetDeviceProperties fills from the device's attributes as CUDA 12 did. It
 * changes nothing else, and with CUDA 12 or older headers it adds nothing.
 */
#ifndef GPURACE_CUDA12_H
#define GPURACE_CUDA12_H

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#endif

#if defined(__CUDACC__) && defined(CUDART_VERSION) && CUDART_VERSION >= 13000

/* Each removed thread-management call is, as NVIDIA documented it, its cudaDevice* twin. */
static inline cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
static inline cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }
static inline cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value) {
    return cudaDeviceSetLimit(limit, value);
}
static inline cudaError_t cudaThreadGetLimit(size_t *pValue, enum cudaLimit limit) {
    return cudaDeviceGetLimit(pValue, limit);
}
static inline cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache cacheConfig) {
    return cudaDeviceSetCacheConfig(cacheConfig);
}
static inline cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache *pCacheConfig) {
    return cudaDeviceGetCacheConfig(pCacheConfig);
}

#ifdef __cplusplus
struct gpurace_cuda12_cudaDeviceProp : cudaDeviceProp {
    int clockRate;
    int deviceOverlap;
    int kernelExecTimeoutEnabled;
    int computeMode;
    int maxTexture1DLinear;
    int memoryClockRate;
    int cooperativeMultiDeviceLaunch;
    int singleToDoublePrecisionPerfRatio;
};

static inline cudaError_t cudaGetDeviceProperties(gpurace_cuda12_cudaDeviceProp *prop, int device) {
    cudaError_t status = cudaGetDeviceProperties(static_cast<cudaDeviceProp *>(prop), device);
    if (status != cudaSuccess) return status;
    cudaDeviceGetAttribute(&prop->clockRate, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&prop->deviceOverlap, cudaDevAttrGpuOverlap, device);
    cudaDeviceGetAttribute(&prop->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout, device);
    cudaDeviceGetAttribute(&prop->computeMode, cudaDevAttrComputeMode, device);
    cudaDeviceGetAttribute(&prop->maxTexture1DLinear, cudaDevAttrMaxTexture1DLinearWidth, device);
    cudaDeviceGetAttribute(&prop->memoryClockRate, cudaDevAttrMemoryClockRate, device);
    prop->cooperativeMultiDeviceLaunch = 0; /* multi-device cooperative launches are gone with CUDA 13 */
    cudaDeviceGetAttribute(&prop->singleToDoublePrecisionPerfRatio, cudaDevAttrSingleToDoublePrecisionPerfRatio,
                           device);
    return cudaSuccess;
}

#define cudaDeviceProp gpurace_cuda12_cudaDeviceProp
#endif /* __cplusplus */

#endif /* __CUDACC__ and CUDART_VERSION >= 13000 */
#endif /* GPURACE_CUDA12_H */
