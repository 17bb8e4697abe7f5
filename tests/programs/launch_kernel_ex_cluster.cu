// Thread-block clusters under exec: cudaLaunchKernelEx with cudaLaunchAttributeClusterDimension groups the
// launch's blocks into clusters of two, and a kernel compiled with __cluster_dims__(4, 1, 1) is launched in
// clusters of four with <<<...>>>. In both, each block stores its rank (plus 1) into the shared memory of rank 0
// through distributed shared memory, and rank 0 copies what it gathered to out after cluster.sync().
// @arch sm_90
// @stdout status: cudaSuccess
// @stdout pairs: 1+2 1+2 1+2 1+2
// @stdout quads: 1+2+3+4 1+2+3+4
// @exit 0
// @launches 2
// @expect clean
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

__device__ void gather(int *out) {
    __shared__ int ranks[4];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned size = cluster.num_blocks();
    if (threadIdx.x == 0) cluster.map_shared_rank(ranks, 0)[cluster.block_rank()] = cluster.block_rank() + 1;
    cluster.sync();
    if (threadIdx.x < size && cluster.block_rank() == 0) out[blockIdx.x + threadIdx.x] = ranks[threadIdx.x];
}

__global__ void pairs(int *out) { gather(out); }

__global__ void __cluster_dims__(4, 1, 1) quads(int *out) { gather(out); }

void print(const char *what, int *out, int size) {
    int got[8];
    cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
    printf("%s:", what);
    for (int i = 0; i < 8; i++) printf(i % size ? "+%d" : " %d", got[i]);
    printf("\n");
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
    print("pairs", out, 2);
    quads<<<8, 32>>>(out);
    print("quads", out, 4);
    return 0;
}
