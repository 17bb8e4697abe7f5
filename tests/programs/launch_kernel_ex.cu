// cudaLaunchKernelEx with launch attributes: the cooperative attribute makes the launch cooperative (its
// grid.sync() works), and a priority, a hint that changes nothing gpurace shows, is accepted. Each block
// writes its element, and after grid.sync() each reads the element of the block before it.
// @stdout status: cudaSuccess
// @stdout 7 0 1 2 3 4 5 6
// @exit 0
// @launches 1
// @expect clean
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

const int BLOCKS = 8;

__global__ void rotate(int *mine, int *before) {
    cg::grid_group grid = cg::this_grid();
    if (threadIdx.x == 0) mine[blockIdx.x] = blockIdx.x;
    grid.sync();
    if (threadIdx.x == 0) before[blockIdx.x] = mine[(blockIdx.x + BLOCKS - 1) % BLOCKS];
}

int main() {
    int *mine, *before;
    cudaMalloc(&mine, BLOCKS * sizeof(int));
    cudaMalloc(&before, BLOCKS * sizeof(int));
    cudaLaunchAttribute attrs[2];
    attrs[0].id = cudaLaunchAttributeCooperative;
    attrs[0].val.cooperative = 1;
    attrs[1].id = cudaLaunchAttributePriority;
    attrs[1].val.priority = 0;
    cudaLaunchConfig_t config = {};
    config.gridDim = BLOCKS;
    config.blockDim = 64;
    config.attrs = attrs;
    config.numAttrs = 2;
    cudaError_t status = cudaLaunchKernelEx(&config, rotate, mine, before);
    printf("status: %s\n", cudaGetErrorName(status));
    int host[BLOCKS];
    cudaMemcpy(host, before, sizeof host, cudaMemcpyDeviceToHost);
    for (int b = 0; b < BLOCKS; b++) printf(b ? " %d" : "%d", host[b]);
    printf("\n");
    cudaFree(mine);
    cudaFree(before);
    return 0;
}
