// A HIP program that frees page-locked memory from hipHostMalloc with hipFree, as some of AMD's samples do: on
// the NVIDIA path hipFree is cudaFree, which refuses memory from cudaMallocHost. The finding names the hipFree
// line of this file, not the line of HIP's header that calls cudaFree.
// @stdout sum 4950
// @exit 1
// @launches 1
// @expect invalid-free 31
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void total(const int *values, int *sum, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n) atomicAdd(sum, values[i]);
}

int main() {
    int *values, *sum;
    hipHostMalloc((void **)&values, 100 * sizeof(int), hipHostMallocDefault);
    for (int i = 0; i < 100; i++) values[i] = i;
    hipMalloc(&sum, sizeof(int));
    hipMemset(sum, 0, sizeof(int));
    int *device_values;
    hipMalloc(&device_values, 100 * sizeof(int));
    hipMemcpy(device_values, values, 100 * sizeof(int), hipMemcpyHostToDevice);
    hipLaunchKernelGGL(total, dim3(1), dim3(128), 0, 0, device_values, sum, 100);
    int host = 0;
    hipMemcpy(&host, sum, sizeof(int), hipMemcpyDeviceToHost);
    printf("sum %d\n", host);
    hipFree(device_values);
    hipFree(sum);
    hipFree(values);
    return 0;
}
