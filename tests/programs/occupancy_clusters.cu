// @arch sm_90
// @stdout shared per multiprocessor 233472, reserved per block 1024
// @stdout required cluster 2x1x1, must be set 0
// @stdout 100 KiB blocks: 2 per multiprocessor, 40 clusters of the kernel's 2
// @stdout 256-thread blocks: 4 per multiprocessor, 40 clusters of 4
// @stdout potential cluster size 8
// @stdout dynamic shared for 2 blocks: 115712
// @stdout too large a cluster: cudaErrorInvalidClusterSize
// @stdout non-portable sizes allowed: cudaSuccess
// @stdout ranks 0 1 0 1
// @exit 0
// @launches 1
// @expect clean
// Occupancy of cluster launches on the virtual device at compute 9.0 (README, "The virtual device"): 228 KiB
// of shared memory per multiprocessor with 1 KiB reserved per block, 40 multiprocessors, and clusters of at
// most 8 blocks placed anywhere among them.
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) paired(int *rank) {
    extern __shared__ char scratch[];
    scratch[threadIdx.x] = 1;
    if (threadIdx.x == 0)
        rank[blockIdx.x] = (int)cg::this_cluster().block_rank();
}

__global__ void plain(int *out) { out[threadIdx.x] = 0; }

int main() {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("shared per multiprocessor %zu, reserved per block %zu\n", p.sharedMemPerMultiprocessor,
           p.reservedSharedMemPerBlock);
    cudaFuncAttributes a;
    cudaFuncGetAttributes(&a, paired);
    printf("required cluster %dx%dx%d, must be set %d\n", a.requiredClusterWidth, a.requiredClusterHeight,
           a.requiredClusterDepth, a.clusterDimMustBeSet);

    int per_sm, clusters, size;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(4);
    config.blockDim = dim3(128);
    config.dynamicSmemBytes = 100 << 10;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, paired, 128, 100 << 10);
    cudaOccupancyMaxActiveClusters(&clusters, (void *)paired, &config);
    printf("100 KiB blocks: %d per multiprocessor, %d clusters of the kernel's 2\n", per_sm, clusters);

    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 4, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t four = {};
    four.gridDim = dim3(8);
    four.blockDim = dim3(256);
    four.attrs = &cluster;
    four.numAttrs = 1;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, plain, 256, 0);
    cudaOccupancyMaxActiveClusters(&clusters, (void *)plain, &four);
    printf("256-thread blocks: %d per multiprocessor, %d clusters of 4\n", per_sm, clusters);
    cudaOccupancyMaxPotentialClusterSize(&size, (void *)plain, &four);
    printf("potential cluster size %d\n", size);

    size_t dynamic;
    cudaOccupancyAvailableDynamicSMemPerBlock(&dynamic, paired, 2, 128);
    printf("dynamic shared for 2 blocks: %zu\n", dynamic);

    cluster.val.clusterDim.x = 16;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, (void *)plain, &four);
    printf("too large a cluster: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    e = cudaFuncSetAttribute(plain, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    printf("non-portable sizes allowed: %s\n", cudaGetErrorName(e));

    int *rank, ranks[4];
    cudaMalloc(&rank, sizeof ranks);
    cudaFuncSetAttribute(paired, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10);
    paired<<<4, 128, 100 << 10>>>(rank);
    cudaMemcpy(ranks, rank, sizeof ranks, cudaMemcpyDeviceToHost);
    printf("ranks %d %d %d %d\n", ranks[0], ranks[1], ranks[2], ranks[3]);
    cudaFree(rank);
    return 0;
}
