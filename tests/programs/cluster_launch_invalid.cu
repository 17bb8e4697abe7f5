// cudaLaunchKernelEx with clusters of two over a grid of seven blocks, which a GPU refuses with
// cudaErrorInvalidClusterSize: the program is stopped at the launch, naming that error.
// @arch sm_90
// @stdout before the launch
// @exit 2
// @launches 1
// @expect_error cudaErrorInvalidClusterSize
#include <cstdio>

__global__ void fill(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

int main() {
    int *out;
    cudaMalloc(&out, 7 * 64 * sizeof(int));
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = 7;
    config.blockDim = 64;
    config.attrs = &attr;
    config.numAttrs = 1;
    printf("before the launch\n");
    fflush(stdout);
    cudaLaunchKernelEx(&config, fill, out);
    printf("after the launch\n");
    return 0;
}
