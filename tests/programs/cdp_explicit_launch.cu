// CUDA Dynamic Parallelism through the device runtime's own calls, as `<<<...>>>` compiled before the V2
// forms: cudaGetParameterBuffer, the arguments stored at their offsets by hand, and cudaLaunchDevice, whose
// cudaError_t the parent stores. The child fills 32 elements from the value passed (100): clean.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout launch: 0 first: 100 last: 131
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void child(int *a, int v) {
    a[threadIdx.x] = v + threadIdx.x;
}

__global__ void parent(int *a, int *status) {
    void *buffer = cudaGetParameterBuffer(16, 16);
    *(int **)buffer = a;
    *(int *)((char *)buffer + 8) = 100;
    *status = cudaLaunchDevice((void *)child, buffer, dim3(1), dim3(32), 0, 0);
}

int main() {
    int *a, *status;
    cudaMalloc(&a, 32 * sizeof(int));
    cudaMalloc(&status, sizeof(int));
    parent<<<1, 1>>>(a, status);
    int host[32], launched = -1;
    cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost);
    cudaMemcpy(&launched, status, sizeof launched, cudaMemcpyDeviceToHost);
    printf("launch: %d first: %d last: %d\n", launched, host[0], host[31]);
    return 0;
}
