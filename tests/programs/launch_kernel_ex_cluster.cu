// cudaLaunchKernelEx with a launch attribute whose semantics gpurace does not model (thread block
// clusters): the program is stopped at the launch, naming the attribute.
// @stdout before the launch
// @exit 2
// @expect_error cudaLaunchKernelEx with the launch attribute cudaLaunchAttributeClusterDimension is not supported
#include <cstdio>

__global__ void fill(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

int main() {
    int *out;
    cudaMalloc(&out, 256 * sizeof(int));
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = 4;
    config.blockDim = 64;
    config.attrs = &attr;
    config.numAttrs = 1;
    printf("before the launch\n");
    fflush(stdout);
    cudaLaunchKernelEx(&config, fill, out);
    printf("after the launch\n");
    return 0;
}
