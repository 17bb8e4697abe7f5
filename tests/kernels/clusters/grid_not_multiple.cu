// @kernel fill(int*)
// @launch --arch compute_90 --cluster 2 --grid 3 --block 32 --arg buf:96
// @expect_error the grid (3,1,1) is not a multiple of the cluster in x
// A launch whose grid (3 blocks) is not a multiple of its cluster dimensions (2 blocks): a GPU refuses it
// with cudaErrorInvalidClusterSize, and so does gpurace (exit 2).
__global__ void fill(int *out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}
