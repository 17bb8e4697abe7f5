// cudaLaunchKernelEx with clusters of two over a grid of seven blocks, which a GPU refuses with
// cudaErrorInvalidClusterSize: the launch fails with that error (the kernel does not run), the program
// prints it and goes on, and gpurace reports an invalid-launch finding at the launch. A kernel compiled with
// __cluster_dims__(4, 1, 1) and launched with <<<6, 32>>> is refused the same way; with <<<8, 32>>> it runs.
// @arch sm_90
// @stdout attribute: cudaErrorInvalidClusterSize
// @stdout compiled: cudaErrorInvalidClusterSize
// @stdout compiled, whole clusters: cudaSuccess, 256 ones
// @exit 1
// @launches 3
// @expect invalid-launch 33
// @expect invalid-launch 35
#include <cstdio>

__global__ void fill(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

__global__ void __cluster_dims__(4, 1, 1) fill_clusters(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

int main() {
    int *out;
    cudaMalloc(&out, 8 * 64 * sizeof(int));
    cudaMemset(out, 0, 8 * 64 * sizeof(int));
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
    cudaError_t e = cudaLaunchKernelEx(&config, fill, out);
    printf("attribute: %s\n", cudaGetErrorName(e));
    fill_clusters<<<6, 32>>>(out);
    printf("compiled: %s\n", cudaGetErrorName(cudaGetLastError()));
    fill_clusters<<<8, 32>>>(out);
    e = cudaGetLastError();
    int host[8 * 64], ones = 0;
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 8 * 64; i++) ones += host[i];
    printf("compiled, whole clusters: %s, %d ones\n", cudaGetErrorName(e), ones);
    cudaFree(out);
    return 0;
}
