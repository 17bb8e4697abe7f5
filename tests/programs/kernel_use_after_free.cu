// Kernels that touch memory after its free: cudaMalloc memory read after cudaFree, page-locked memory written
// after cudaFreeHost, stream-ordered memory used by a kernel that its stream runs after the cudaFreeAsync, and
// cuMemAlloc memory read after cuMemFree. A free unmaps the allocation's address space, so each kernel faults
// (an out-of-bounds finding whose cause names the freed allocation and the line that freed it) and the next
// synchronising call returns cudaErrorIllegalAddress, which sticks until cudaDeviceReset.
// @nvcc_flags -lcuda
// @stdout after cudaFree: cudaErrorIllegalAddress
// @stdout after cudaFreeHost: cudaErrorIllegalAddress
// @stdout after cudaFreeAsync: cudaErrorIllegalAddress
// @stdout after cuMemFree: cudaErrorIllegalAddress
// @exit 1
// @launches 5
// @expect out-of-bounds 21
// @expect out-of-bounds 22
// @expect out-of-bounds 23
// @expect out-of-bounds 24
#include <cstdio>
#include <cuda.h>

// The kernels read or write one int per thread (32 threads).
__global__ void copy_out(const int *x, int *out) { out[threadIdx.x] = x[threadIdx.x]; }
__global__ void fill(int *x) { x[threadIdx.x] = 7; }
__global__ void add_one(int *x) { x[threadIdx.x] += 1; }
__global__ void sum_into(const int *x, int *out) { atomicAdd(out, x[threadIdx.x]); }

int main() {
    const size_t bytes = 32 * sizeof(int);
    int *d, *out, *pinned;
    cudaMalloc(&d, bytes);
    cudaMalloc(&out, bytes);
    cudaMemset(d, 0, bytes);
    cudaFree(d);
    copy_out<<<1, 32>>>(d, out);
    printf("after cudaFree: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaDeviceReset();

    cudaMallocHost(&pinned, bytes);
    cudaFreeHost(pinned);
    fill<<<1, 32>>>(pinned);
    printf("after cudaFreeHost: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaDeviceReset();

    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMallocAsync(&d, bytes, s);
    fill<<<1, 32, 0, s>>>(d);
    cudaFreeAsync(d, s);
    add_one<<<1, 32, 0, s>>>(d);
    printf("after cudaFreeAsync: %s\n", cudaGetErrorName(cudaStreamSynchronize(s)));
    cudaDeviceReset();

    CUdeviceptr block;
    cudaMalloc(&out, sizeof(int));
    cudaMemset(out, 0, sizeof(int));
    cuMemAlloc(&block, bytes);
    cuMemsetD32(block, 1, 32);
    cuMemFree(block);
    sum_into<<<1, 32>>>((const int *)block, out);
    printf("after cuMemFree: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
