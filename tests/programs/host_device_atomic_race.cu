// A device-scope atomic (atomicAdd) is atomic only among the device's threads: the host's update of the same
// managed counter before it waits for the kernel races with it (a system-scope atomicAdd_system would not).
// @stdout total = 4352
// @exit 1
// @launches 1
// @expect data-race 9 16
#include <cstdio>

__global__ void count(int *counter) { atomicAdd(counter, 1); }

int main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    *counter = 0;
    count<<<1, 256>>>(counter);
    for (int i = 0; i < 4096; i++) __sync_fetch_and_add(counter, 1);
    cudaDeviceSynchronize();
    printf("total = %d\n", *counter);
    cudaFree(counter);
    return 0;
}
