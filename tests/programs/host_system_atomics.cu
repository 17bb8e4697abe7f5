// The host and a kernel update the same managed counters at once, without waiting for each other:
// system-scope atomics (atomicAdd_system) on the device and atomic instructions on the host do not race, as
// CUDA's system-wide atomics promise; kernels of two streams updating one counter with device-scope atomics
// do not race either. The totals are exact.
// @stdout total = 4352, max = 255
// @stdout both streams: 128
// @exit 0
// @launches 3
// @expect clean
#include <cstdio>

__global__ void count(int *counters) {
    atomicAdd_system(&counters[0], 1);
    atomicMax_system(&counters[1], (int)threadIdx.x);
}

__global__ void bump(int *counter) { atomicAdd(counter, 1); }

int main() {
    int *counters;
    cudaMallocManaged(&counters, 2 * sizeof(int));
    counters[0] = counters[1] = 0;
    count<<<1, 256>>>(counters);
    for (int i = 0; i < 4096; i++) __sync_fetch_and_add(&counters[0], 1);
    cudaDeviceSynchronize();
    printf("total = %d, max = %d\n", counters[0], counters[1]);

    int *shared_counter;
    cudaMalloc(&shared_counter, sizeof(int));
    cudaMemset(shared_counter, 0, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    bump<<<1, 64, 0, a>>>(shared_counter);
    bump<<<1, 64, 0, b>>>(shared_counter);
    cudaDeviceSynchronize();
    int total;
    cudaMemcpy(&total, shared_counter, sizeof(int), cudaMemcpyDeviceToHost);
    printf("both streams: %d\n", total);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(shared_counter);
    cudaFree(counters);
    return 0;
}
