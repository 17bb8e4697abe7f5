// @launch --grid 2 --block 32 --arg 64 --global src=buf:64:iota --global dst=buf:64
// @expect clean
// `__device__` pointers set from the command line: each thread copies its
// own element from `src` to `dst`.
__device__ const int *src;
__device__ int *dst;
__global__ void copy(int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = 2 * src[i];
}
