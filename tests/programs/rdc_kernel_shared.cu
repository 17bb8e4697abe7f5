// With relocatable device code nvcc puts the __shared__ variables of __device__ functions at the module's scope
// in PTX; each kernel's blocks still have only those its own code uses. Both kernels here use 40 KiB of static
// shared memory, declared in the device functions they call: together they would be
// more than a block may have (48 KiB), alone each fits, once per multiprocessor (64 KiB on sm_75), as
// cudaFuncGetAttributes and the occupancy query say. `reverse` is correct; `rotate` reads its neighbour's
// element (line 27) with no barrier after the writes (line 26): a shared-memory race.
// @nvcc_flags -rdc=true
// @stdout shared 40960 40960, blocks per multiprocessor 1 1
// @stdout reversed 10239 ... 0
// @exit 1
// @launches 2
// @expect data-race 26 27
#include <cstdio>

#define N 10240

__device__ void reverse_block(int *out) {
    __shared__ int buf[N];
    for (int i = threadIdx.x; i < N; i += blockDim.x) buf[i] = i;
    __syncthreads();
    for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = buf[N - 1 - i];
}

__device__ void rotate_block(int *out) {
    __shared__ int ring[N];
    for (int i = threadIdx.x; i < N; i += blockDim.x) ring[i] = i;
    for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = ring[(i + 1) % N];
}

__global__ void reverse(int *out) { reverse_block(out); }
__global__ void rotate(int *out) { rotate_block(out); }

int main() {
    cudaFuncAttributes a, b;
    cudaFuncGetAttributes(&a, reverse);
    cudaFuncGetAttributes(&b, rotate);
    int blocks_a = 0, blocks_b = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_a, reverse, 256, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_b, rotate, 256, 0);
    printf("shared %zu %zu, blocks per multiprocessor %d %d\n", a.sharedSizeBytes, b.sharedSizeBytes, blocks_a,
           blocks_b);
    int *out, *rotated;
    cudaMalloc(&out, N * sizeof(int));
    cudaMalloc(&rotated, N * sizeof(int));
    reverse<<<1, 256>>>(out);
    rotate<<<1, 256>>>(rotated);
    int first, last;
    cudaMemcpy(&first, out, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&last, out + N - 1, sizeof(int), cudaMemcpyDeviceToHost);
    printf("reversed %d ... %d\n", first, last);
    cudaFree(out);
    cudaFree(rotated);
    return 0;
}
