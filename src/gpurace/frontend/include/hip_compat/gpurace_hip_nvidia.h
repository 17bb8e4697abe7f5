/* gpurace: compatibility shim for HIP's NVIDIA path under newer CUDA toolkits.
 *
 * gpurace compiles a HIP source as CUDA with __HIP_PLATFORM_NVIDIA__ defined, so
 * that HIP's own headers (hip/hip_runtime.h -> hip/nvidia_detail/...) map every
 * hip* call, __syncthreads, atomics and __shfl* onto CUDA. Those headers' host
 * API wrappers (nvidia_hip_runtime_api.h) are inline functions that call CUDA
 * runtime functions by the signatures CUDA 11/12 had; CUDA 13 removed some of
 * them (texture references, multi-device cooperative launches, some
 * cudaDeviceProp fields) and changed others (cudaMemLocation arguments, graph
 * edge data, cuCtxCreate). None of these is used by a kernel; they only stop
 * the header from compiling.
 *
 * This file is pre-included (nvcc -include) before a HIP source. It includes
 * the CUDA runtime first, then, for CUDA 13 and later, renames the calls that
 * the HIP headers make to overloads that accept both the old and the new
 * signatures, declares what was removed (returning cudaErrorNotSupported), and
 * gives cudaDeviceProp back its removed fields (zero). It changes nothing in
 * the HIP headers and nothing that a kernel compiles to, except one thing:
 *
 * HIP's warp votes take no mask (__ballot, __any, __all: the lanes that are
 * active). HIP's NVIDIA path maps its mask-less __shfl* onto __shfl*_sync
 * but leaves these to CUDA's legacy intrinsics, which compile to `vote`
 * without `.sync`, an instruction sm_70 and later GPUs do not have. Here they
 * are the *_sync votes over __activemask(), which is what they meant.
 */
#ifndef GPURACE_HIP_NVIDIA_H
#define GPURACE_HIP_NVIDIA_H

#include <cuda_runtime.h>
#include <cuda.h>

#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000 && defined(__cplusplus)

/* cudaDeviceProp lost clockRate, memoryClockRate, computeMode, kernelExecTimeoutEnabled and
   cooperativeMultiDeviceLaunch; HIP's hipGetDeviceProperties copies them. */
struct gpurace_hip_cudaDeviceProp : cudaDeviceProp {
    int clockRate = 0;
    int memoryClockRate = 0;
    int computeMode = 0;
    int kernelExecTimeoutEnabled = 0;
    int cooperativeMultiDeviceLaunch = 0;
};
#define cudaDeviceProp gpurace_hip_cudaDeviceProp

#define cudaDevAttrCooperativeMultiDeviceLaunch ((cudaDeviceAttr)95)

static inline cudaMemLocation gpurace_hip_location(int device) {
    cudaMemLocation loc;
    loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = device == cudaCpuDeviceId ? 0 : device;
    return loc;
}

static inline cudaError_t gpurace_hip_cudaMemAdvise(const void* p, size_t n, cudaMemoryAdvise a, int device) {
    return cudaMemAdvise(p, n, a, gpurace_hip_location(device));
}
static inline cudaError_t gpurace_hip_cudaMemAdvise(const void* p, size_t n, cudaMemoryAdvise a, cudaMemLocation loc) {
    return cudaMemAdvise(p, n, a, loc);
}
#define cudaMemAdvise gpurace_hip_cudaMemAdvise

static inline cudaError_t gpurace_hip_cudaMemPrefetchAsync(const void* p, size_t n, int device, cudaStream_t s = 0) {
    return cudaMemPrefetchAsync(p, n, gpurace_hip_location(device), 0, s);
}
static inline cudaError_t gpurace_hip_cudaMemPrefetchAsync(const void* p, size_t n, cudaMemLocation loc, unsigned flags, cudaStream_t s = 0) {
    return cudaMemPrefetchAsync(p, n, loc, flags, s);
}
#undef cudaMemPrefetchAsync
#define cudaMemPrefetchAsync gpurace_hip_cudaMemPrefetchAsync

static inline CUresult gpurace_hip_cuCtxCreate(CUcontext* ctx, unsigned int flags, CUdevice dev) {
    return cuCtxCreate(ctx, (CUctxCreateParams*)0, flags, dev);
}
static inline CUresult gpurace_hip_cuCtxCreate(CUcontext* ctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
    return cuCtxCreate(ctx, params, flags, dev);
}
#undef cuCtxCreate
#define cuCtxCreate gpurace_hip_cuCtxCreate

/* Texture references and multi-device cooperative launches are gone from CUDA 13. */
template <class T, int dim, enum cudaTextureReadMode readMode> struct texture;
static inline cudaError_t cudaBindTexture(size_t*, const struct textureReference*, const void*, const cudaChannelFormatDesc*, size_t = ~(size_t)0) {
    return cudaErrorNotSupported;
}
static inline cudaError_t cudaBindTexture2D(size_t*, const struct textureReference*, const void*, const cudaChannelFormatDesc*, size_t, size_t, size_t) {
    return cudaErrorNotSupported;
}
static inline cudaError_t cudaGetTextureAlignmentOffset(size_t*, const struct textureReference*) { return cudaErrorNotSupported; }
static inline cudaError_t cudaUnbindTexture(const struct textureReference*) { return cudaErrorNotSupported; }
static inline cudaError_t cudaLaunchCooperativeKernelMultiDevice(struct cudaLaunchParams*, unsigned int, unsigned int = 0) {
    return cudaErrorNotSupported;
}

/* Graph and capture calls gained edge data in CUDA 12.3; CUDA 13 dropped the forms without it. */
static inline cudaError_t gpurace_hip_cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to, size_t n) {
    return cudaGraphAddDependencies(g, from, to, (const cudaGraphEdgeData*)0, n);
}
static inline cudaError_t gpurace_hip_cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to, const cudaGraphEdgeData* e, size_t n) {
    return cudaGraphAddDependencies(g, from, to, e, n);
}
#define cudaGraphAddDependencies gpurace_hip_cudaGraphAddDependencies
static inline cudaError_t gpurace_hip_cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to, size_t n) {
    return cudaGraphRemoveDependencies(g, from, to, (const cudaGraphEdgeData*)0, n);
}
static inline cudaError_t gpurace_hip_cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to, const cudaGraphEdgeData* e, size_t n) {
    return cudaGraphRemoveDependencies(g, from, to, e, n);
}
#define cudaGraphRemoveDependencies gpurace_hip_cudaGraphRemoveDependencies
static inline cudaError_t gpurace_hip_cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, size_t* n) {
    return cudaGraphGetEdges(g, from, to, (cudaGraphEdgeData*)0, n);
}
static inline cudaError_t gpurace_hip_cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* e, size_t* n) {
    return cudaGraphGetEdges(g, from, to, e, n);
}
#define cudaGraphGetEdges gpurace_hip_cudaGraphGetEdges
static inline cudaError_t gpurace_hip_cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, size_t* n) {
    return cudaGraphNodeGetDependencies(node, deps, (cudaGraphEdgeData*)0, n);
}
static inline cudaError_t gpurace_hip_cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* e, size_t* n) {
    return cudaGraphNodeGetDependencies(node, deps, e, n);
}
#define cudaGraphNodeGetDependencies gpurace_hip_cudaGraphNodeGetDependencies
static inline cudaError_t gpurace_hip_cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* deps, size_t* n) {
    return cudaGraphNodeGetDependentNodes(node, deps, (cudaGraphEdgeData*)0, n);
}
static inline cudaError_t gpurace_hip_cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* e, size_t* n) {
    return cudaGraphNodeGetDependentNodes(node, deps, e, n);
}
#define cudaGraphNodeGetDependentNodes gpurace_hip_cudaGraphNodeGetDependentNodes
static inline cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t s, cudaStreamCaptureStatus* status, unsigned long long* id = 0,
                                                      cudaGraph_t* graph = 0, const cudaGraphNode_t** deps = 0, size_t* n = 0) {
    return cudaStreamGetCaptureInfo(s, status, id, graph, deps, (const cudaGraphEdgeData**)0, n);
}
static inline cudaError_t gpurace_hip_cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, size_t n, unsigned int flags = 0) {
    return cudaStreamUpdateCaptureDependencies(s, deps, (const cudaGraphEdgeData*)0, n, flags);
}
static inline cudaError_t gpurace_hip_cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, const cudaGraphEdgeData* e, size_t n, unsigned int flags = 0) {
    return cudaStreamUpdateCaptureDependencies(s, deps, e, n, flags);
}
#undef cudaStreamUpdateCaptureDependencies
#define cudaStreamUpdateCaptureDependencies gpurace_hip_cudaStreamUpdateCaptureDependencies

#endif /* CUDA 13 */

#if defined(__cplusplus)
static __device__ __forceinline__ unsigned long long gpurace_hip_ballot(int predicate) {
    return __ballot_sync(__activemask(), predicate);
}
static __device__ __forceinline__ int gpurace_hip_any(int predicate) { return __any_sync(__activemask(), predicate); }
static __device__ __forceinline__ int gpurace_hip_all(int predicate) { return __all_sync(__activemask(), predicate); }
/* Object-like, so that the names libcu++ gives its own (struct __any, ...) are renamed alike and still work. */
#define __ballot gpurace_hip_ballot
#define __any gpurace_hip_any
#define __all gpurace_hip_all
#endif
#endif /* GPURACE_HIP_NVIDIA_H */
