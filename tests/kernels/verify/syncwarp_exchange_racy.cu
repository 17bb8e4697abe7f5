// @verify_launch --grid 1 --block 64
// @verify s race certain 11 13
// @verify out race-free
// @verify_labels s CI DI
// @verify_warp_barriers proved uniform in their masks (lanes 0xffffffff
// __syncwarp() orders the lanes of one warp only: the partner lane
// threadIdx.x ^ 32 is in the other warp of the block.
__global__ void swap_halves(int* out)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x ^ 32];
}
