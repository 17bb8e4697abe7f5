// CUDA Dynamic Parallelism, race-free: `halves` splits its range in two and launches itself on each half, down
// to blocks of 32 elements, which double their elements. The left half goes into the block's NULL stream, the
// right half is fire-and-forget: the two are unordered, but their ranges are disjoint. The parent writes nothing
// after its launches, and each launch is checked with cudaGetLastError in device code. 256 elements: 1 host
// launch, 2 + 4 + 8 device launches.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout launch errors: 0
// @stdout doubled: PASS
// @exit 0
// @launches 15
// @expect clean
#include <cstdio>

__device__ int launch_errors;

__global__ void halves(int *data, int lo, int hi) {
    int n = hi - lo;
    if (n <= 32) {
        data[lo + threadIdx.x] *= 2;
        return;
    }
    if (threadIdx.x == 0) {
        int mid = lo + n / 2;
        halves<<<1, 32>>>(data, lo, mid);
        halves<<<1, 32, 0, cudaStreamFireAndForget>>>(data, mid, hi);
        if (cudaGetLastError() != cudaSuccess)
            atomicAdd(&launch_errors, 1);
    }
}

int main() {
    const int n = 256;
    int host[n];
    for (int i = 0; i < n; i++)
        host[i] = i;
    int *data;
    cudaMalloc(&data, sizeof host);
    cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice);
    halves<<<1, 32>>>(data, 0, n);
    cudaMemcpy(host, data, sizeof host, cudaMemcpyDeviceToHost);
    int errors = -1;
    cudaMemcpyFromSymbol(&errors, launch_errors, sizeof errors);
    printf("launch errors: %d\n", errors);
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok &= host[i] == 2 * i;
    printf("doubled: %s\n", ok ? "PASS" : "FAIL");
    cudaFree(data);
    return 0;
}
