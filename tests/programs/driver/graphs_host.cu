// CUDA graphs through the driver API (built with -lcuda), with the kernels of kernels.cu loaded from the PTX file
// that is its first argument. A graph made node by node copies `in` to the device (a CUDA_MEMCPY3D node),
// clears `out` (a memset node), runs `scale` twice into `out` (factors 2, then 3) and copies `out` back; a
// graph captured from a stream (cuStreamBeginCapture ... cuStreamEndCapture) launches `scale` between two
// asynchronous copies. Both graphs are instantiated, launched and checked, and the program prints what it
// found. With a second argument, `unordered`, the two `scale` nodes have no edge between them: they may run
// at once on a GPU, and their writes to `out` race (kernels.cu line 11).
#include <cstdio>
#include <cstring>
#include <cuda.h>

#include "check.h"

static CUDA_MEMCPY3D linear_copy(CUmemorytype to, void *dst, CUmemorytype from, const void *src, size_t bytes) {
    CUDA_MEMCPY3D copy = {};
    copy.srcMemoryType = from, copy.dstMemoryType = to;
    if (from == CU_MEMORYTYPE_HOST) copy.srcHost = src; else copy.srcDevice = (CUdeviceptr)src;
    if (to == CU_MEMORYTYPE_HOST) copy.dstHost = dst; else copy.dstDevice = (CUdeviceptr)dst;
    copy.WidthInBytes = bytes, copy.Height = 1, copy.Depth = 1;
    return copy;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3)
        return 4;
    const bool unordered = argc == 3 && strcmp(argv[2], "unordered") == 0;
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction scale;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuCtxCreate(&context, nullptr, 0, device));
    CHECK(cuModuleLoad(&module, argv[1]));
    CHECK(cuModuleGetFunction(&scale, module, "scale"));

    const int n = 128;
    int host_in[n], host_out[n];
    for (int i = 0; i < n; i++) host_in[i] = i;
    CUdeviceptr in, out;
    CHECK(cuMemAlloc(&in, sizeof host_in));
    CHECK(cuMemAlloc(&out, sizeof host_out));

    CUgraph graph;
    CHECK(cuGraphCreate(&graph, 0));
    CUgraphNode upload, clear, twice, thrice, download;
    CUDA_MEMCPY3D up = linear_copy(CU_MEMORYTYPE_DEVICE, (void *)in, CU_MEMORYTYPE_HOST, host_in, sizeof host_in);
    CHECK(cuGraphAddMemcpyNode(&upload, graph, nullptr, 0, &up, context));
    CUDA_MEMSET_NODE_PARAMS zero = {};
    zero.dst = out, zero.value = 0, zero.elementSize = 4, zero.width = n, zero.height = 1;
    CHECK(cuGraphAddMemsetNode(&clear, graph, nullptr, 0, &zero, context));
    int two = 2, three = 3, count = n;
    void *args2[] = {&out, &in, &two, &count}, *args3[] = {&out, &in, &three, &count};
    CUDA_KERNEL_NODE_PARAMS launch = {};
    launch.func = scale, launch.gridDimX = 2, launch.gridDimY = 1, launch.gridDimZ = 1;
    launch.blockDimX = 64, launch.blockDimY = 1, launch.blockDimZ = 1, launch.kernelParams = args2;
    CUgraphNode before_scale[] = {upload, clear};
    CHECK(cuGraphAddKernelNode(&twice, graph, before_scale, 2, &launch));
    launch.kernelParams = args3;
    CHECK(cuGraphAddKernelNode(&thrice, graph, unordered ? before_scale : &twice, unordered ? 2 : 1, &launch));
    CUDA_MEMCPY3D down = linear_copy(CU_MEMORYTYPE_HOST, host_out, CU_MEMORYTYPE_DEVICE, (void *)out, sizeof host_out);
    CUgraphNode before_download[] = {twice, thrice};
    CHECK(cuGraphAddMemcpyNode(&download, graph, before_download, 2, &down, context));
    size_t nodes = 0;
    CHECK(cuGraphGetNodes(graph, nullptr, &nodes));
    CUgraphNodeType type;
    CHECK(cuGraphNodeGetType(clear, &type));
    printf("built: %zu nodes, memset node %s\n", nodes, type == CU_GRAPH_NODE_TYPE_MEMSET ? "ok" : "wrong");

    CUgraphExec exec;
    CHECK(cuGraphInstantiate(&exec, graph, 0));
    CHECK(cuGraphLaunch(exec, nullptr));
    CHECK(cuCtxSynchronize());
    bool ok = true;
    for (int i = 0; i < n; i++) ok = ok && host_out[i] == 3 * i + 5;
    printf("explicit graph: %s\n", ok ? "ok" : "wrong");

    CUstream stream;
    CUgraph captured;
    CUgraphExec captured_exec;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < n; i++) host_in[i] = 2 * i;
    CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus status;
    CHECK(cuStreamIsCapturing(stream, &status));
    CHECK(cuMemcpyHtoDAsync(in, host_in, sizeof host_in, stream));
    CHECK(cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, stream, args2, nullptr));
    CHECK(cuMemcpyDtoHAsync(host_out, out, sizeof host_out, stream));
    CHECK(cuStreamEndCapture(stream, &captured));
    CHECK(cuGraphGetNodes(captured, nullptr, &nodes));
    printf("captured: %zu nodes, %s\n", nodes, status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "active" : "not active");
    CHECK(cuGraphInstantiate(&captured_exec, captured, 0));
    CHECK(cuGraphLaunch(captured_exec, stream));
    CHECK(cuStreamSynchronize(stream));
    ok = true;
    for (int i = 0; i < n; i++) ok = ok && host_out[i] == 4 * i + 5;
    printf("captured graph: %s\n", ok ? "ok" : "wrong");

    CHECK(cuGraphExecDestroy(captured_exec));
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(captured));
    CHECK(cuGraphDestroy(graph));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuMemFree(in));
    CHECK(cuMemFree(out));
    CHECK(cuModuleUnload(module));
    CHECK(cuCtxDestroy(context));
    return 0;
}
