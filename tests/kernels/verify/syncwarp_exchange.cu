// @verify s race-free
// @verify out race-free
// @verify_warp_barriers proved uniform in their masks (lanes 0xffffffff
// same_warp.cu with __syncwarp() between the write and the read: it orders
// the lanes of the warp, and the partner lane (threadIdx.x ^ 1) is always
// in the same warp, for every launch.
__global__ void swap_pairs(int* out)
{
    __shared__ int s[1024];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x ^ 1];
}
