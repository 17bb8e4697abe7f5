// A program written for CUDA 12: it waits with cudaThreadSynchronize and uses the other thread-management
// calls and cudaDeviceProp fields CUDA 13 removed (gpurace declares them, README "Whole programs"). Every
// result is read after cudaThreadSynchronize, which waits for all streams as cudaDeviceSynchronize does, so
// nothing races; the limits and cache preference set through the cudaThread* calls are those the cudaDevice*
// calls read back, and the removed fields hold the device's attributes.
// @stdout squares 0 1 4 9 ... 3969
// @stdout heap limit 16777216, cache preference 1
// @stdout clockRate, memoryClockRate, deviceOverlap, computeMode as the attributes: yes
// @stdout exit 0
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void square(int *x) { x[blockIdx.x * blockDim.x + threadIdx.x] *= blockIdx.x * blockDim.x + threadIdx.x; }
__global__ void fill(int *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * blockDim.x + threadIdx.x; }

int main() {
    int *squares;
    cudaMallocManaged(&squares, 64 * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);
    fill<<<2, 32>>>(squares);
    cudaThreadSynchronize();
    square<<<2, 32, 0, s>>>(squares);
    cudaThreadSynchronize();
    printf("squares %d %d %d %d ... %d\n", squares[0], squares[1], squares[2], squares[3], squares[63]);

    size_t heap = 0;
    cudaFuncCache cache = cudaFuncCachePreferNone;
    cudaThreadSetLimit(cudaLimitMallocHeapSize, 16 << 20);
    cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize);
    cudaThreadSetCacheConfig(cudaFuncCachePreferShared);
    cudaThreadGetCacheConfig(&cache);
    printf("heap limit %zu, cache preference %d\n", heap, (int)cache);

    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int clock, memory_clock, overlap, mode;
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&memory_clock, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0);
    cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0);
    bool same = prop.clockRate == clock && prop.memoryClockRate == memory_clock && prop.deviceOverlap == overlap &&
                prop.computeMode == mode && clock > 0;
    printf("clockRate, memoryClockRate, deviceOverlap, computeMode as the attributes: %s\n", same ? "yes" : "no");

    cudaStreamDestroy(s);
    cudaFree(squares);
    printf("exit %d\n", (int)cudaThreadExit());
    return 0;
}
