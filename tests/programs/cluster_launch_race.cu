// launch_kernel_ex_cluster.cu's pairs without cluster.sync(): rank 0 of each cluster of two reads what its
// neighbour stores into its shared memory with nothing ordering the two, a race in distributed shared
// memory that only a launch in clusters can have.
// @arch sm_90
// @stdout status: cudaSuccess
// @exit 1
// @launches 1
// @expect data-race 17 18
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

__global__ void pairs(int *out) {
    __shared__ int ranks[2];
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) cluster.map_shared_rank(ranks, 0)[cluster.block_rank()] = cluster.block_rank() + 1;
    if (threadIdx.x < 2 && cluster.block_rank() == 0) out[blockIdx.x + threadIdx.x] = ranks[threadIdx.x];
}

int main() {
    int *out;
    cudaMalloc(&out, 8 * sizeof(int));
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = 8;
    config.blockDim = 32;
    config.attrs = &attr;
    config.numAttrs = 1;
    printf("status: %s\n", cudaGetErrorName(cudaLaunchKernelEx(&config, pairs, out)));
    cudaDeviceSynchronize();
    return 0;
}
