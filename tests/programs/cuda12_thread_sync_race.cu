// A program written for CUDA 12 that reads a kernel's results too early: the host reads managed memory
// (line 21) while the kernel that writes it (line 12) may still run, then waits with cudaThreadSynchronize
// and reads again (line 23), which is ordered after the kernel. Only the first read races. gpurace runs the
// kernel at once, so both reads see its value. The second kernel writes past its allocation, and the fault
// comes back from the next cudaThreadSynchronize, as it does from cudaDeviceSynchronize.
// @stdout early 42, late 42
// @stdout after the faulting kernel: cudaErrorIllegalAddress
// @exit 1
// @launches 2
// @expect data-race 12 21
// @expect out-of-bounds 13
__global__ void answer(int *x) { x[threadIdx.x] = 42; }
__global__ void overrun(int *x) { x[threadIdx.x + 32] = 1; }

#include <cstdio>

int main() {
    int *managed;
    cudaMallocManaged(&managed, 32 * sizeof(int));
    answer<<<1, 32>>>(managed);
    int early = managed[5];
    cudaThreadSynchronize();
    int late = managed[5];
    printf("early %d, late %d\n", early, late);
    overrun<<<1, 32>>>(managed);
    printf("after the faulting kernel: %s\n", cudaGetErrorName(cudaThreadSynchronize()));
    cudaFree(managed);
    return 0;
}
