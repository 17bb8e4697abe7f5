// With no findings, the program's own exit status is gpurace's. On the way, the virtual device as the
// program sees it (README, "Whole programs"), events (0 ms: simulated time) and streams.
// @stdout gpurace simulated device: compute 7.5, 40 SMs, 1024 threads per block, warp 32, 49152 bytes shared per block
// @stdout grid 2147483647 x 65535 x 65535, block 1024 x 1024 x 64
// @stdout devices 1, opt-in shared 65536, runtime 13000
// @stdout elapsed 0.000 ms
// @stdout no error
// @exit 3
// @expect clean
#include <cstdio>

int main() {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s: compute %d.%d, %d SMs, %d threads per block, warp %d, %zu bytes shared per block\n", p.name, p.major,
           p.minor, p.multiProcessorCount, p.maxThreadsPerBlock, p.warpSize, p.sharedMemPerBlock);
    printf("grid %d x %d x %d, block %d x %d x %d\n", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2],
           p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    int count, optin, version;
    cudaGetDeviceCount(&count);
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    cudaRuntimeGetVersion(&version);
    printf("devices %d, opt-in shared %d, runtime %d\n", count, optin, version);
    cudaStream_t stream;
    cudaEvent_t start, stop;
    cudaStreamCreate(&stream);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, stream);
    cudaStreamSynchronize(stream);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = -1;
    cudaEventElapsedTime(&ms, start, stop);
    printf("elapsed %.3f ms\n", ms);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 3;
}
