// @verify_launch --grid 1 --block 64
// @verify s race certain 12 15
// @verify out race-free
// @verify_labels s CI DI
// @verify_warp_barriers proved uniform in their masks (lanes 0x0000ffff
// syncwarp_partial_mask.cu reading the other half of the warp: lanes 16..31
// are not in the mask, so the barrier does not order them with lanes 0..15.
__global__ void halves(int* out)
{
    __shared__ int s[64];
    unsigned lane = threadIdx.x % 32;
    s[threadIdx.x] = threadIdx.x;
    if (lane < 16) {
        __syncwarp(0xffff);
        out[threadIdx.x] = s[threadIdx.x ^ 16];
    }
}
