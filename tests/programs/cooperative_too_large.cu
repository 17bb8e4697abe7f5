// A cooperative launch must have every block resident at once. With as many blocks as the occupancy
// calculation allows it runs; with one more it fails with cudaErrorCooperativeLaunchTooLarge (and does
// not run), which the program prints, and gpurace reports an invalid-launch finding at that launch. The
// same kernel launched without cudaLaunchCooperativeKernel has no valid grid: its grid.sync() traps, and
// the launch ends with cudaErrorLaunchFailure (a trap finding at the grid.sync() line).
// @stdout fits: cudaSuccess, 40 blocks
// @stdout one more: cudaErrorCooperativeLaunchTooLarge
// @stdout not cooperative: cudaErrorLaunchFailure
// @exit 1
// @launches 3
// @expect invalid-launch 38
// @expect trap 23
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

const int THREADS = 1024;

__global__ void count(int *arrived) {
    cg::grid_group grid = cg::this_grid();
    if (threadIdx.x == 0) atomicAdd(arrived, 1);
    grid.sync();
}

int main() {
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, count, THREADS, 0);
    int *arrived;
    cudaMalloc(&arrived, sizeof(int));
    cudaMemset(arrived, 0, sizeof(int));
    void *args[] = {&arrived};
    cudaLaunchCooperativeKernel((void *)count, sms * per_sm, THREADS, args, 0, 0);
    int n = 0;
    cudaMemcpy(&n, arrived, sizeof n, cudaMemcpyDeviceToHost);
    printf("fits: %s, %d blocks\n", cudaGetErrorName(cudaGetLastError()), n);
    cudaLaunchCooperativeKernel((void *)count, sms * per_sm + 1, THREADS, args, 0, 0);
    printf("one more: %s\n", cudaGetErrorName(cudaGetLastError()));
    count<<<2, 32>>>(arrived);
    printf("not cooperative: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
