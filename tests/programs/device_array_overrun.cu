// A rotation that forgets to wrap its index: `a[i + shift]` runs past the end of the `__device__` array
// `a`. Packed a red zone apart, as a GPU packs variables, those bytes would be `b`, which other threads
// write, and the read would look like a race on `b`; `__device__` arrays are addressed far apart, as
// cudaMalloc memory is (README "Memory layout under exec"), so it is an out-of-bounds read and nothing else.
// @stdout sync: an illegal memory access was encountered
// @exit 1
// @launches 1
// @expect out-of-bounds 15
#include <cstdio>

__device__ float a[64];
__device__ float b[64];

__global__ void rotate(int shift) {
    b[threadIdx.x] = a[threadIdx.x + shift];
}

int main() {
    rotate<<<1, 64>>>(129);
    printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
