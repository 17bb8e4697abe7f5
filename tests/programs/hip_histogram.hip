// A HIP program (HIP's runtime API, hipLaunchKernelGGL and <<<...>>>) run through HIP's NVIDIA path: two
// histograms of the same 256 values into 8 bins, one with atomicAdd (clean), one with a plain increment
// (threads of both blocks update the same bins unordered: a data race, reported at the .hip line).
// @stdout atomic: 32 32 32 32 32 32 32 32
// @exit 1
// @launches 2
// @expect data-race 21
#include <hip/hip_runtime.h>
#include <cstdio>

#define N 256
#define BINS 8

__global__ void histogram_atomic(const int *values, int *bins, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n) atomicAdd(&bins[values[i] % BINS], 1);
}

__global__ void histogram_plain(const int *values, int *bins, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n) bins[values[i] % BINS] += 1;
}

int main() {
    int host[N];
    for (int i = 0; i < N; i++) host[i] = i;
    int *values, *bins;
    hipMalloc(&values, N * sizeof(int));
    hipMalloc(&bins, BINS * sizeof(int));
    hipMemcpy(values, host, N * sizeof(int), hipMemcpyHostToDevice);
    hipMemset(bins, 0, BINS * sizeof(int));
    hipLaunchKernelGGL(histogram_atomic, dim3(2), dim3(128), 0, 0, values, bins, N);
    int counts[BINS];
    hipMemcpy(counts, bins, sizeof(counts), hipMemcpyDeviceToHost);
    printf("atomic:");
    for (int b = 0; b < BINS; b++) printf(" %d", counts[b]);
    printf("\n");
    hipMemset(bins, 0, BINS * sizeof(int));
    histogram_plain<<<2, 128>>>(values, bins, N);
    hipDeviceSynchronize();
    hipFree(values);
    hipFree(bins);
    return 0;
}
