// @verify_launch --grid 1 --block 64
// @verify s race-free
// @verify out race-free
// @verify_warp_barriers proved uniform in their masks (lanes 0x0000ffff
// The low half of each warp exchanges values and synchronises with the
// mask that names exactly its lanes: __syncwarp(0xffff) orders them.
__global__ void low_half(int* out)
{
    __shared__ int s[64];
    unsigned lane = threadIdx.x % 32;
    if (lane < 16) {
        s[threadIdx.x] = threadIdx.x;
        __syncwarp(0xffff);
        out[threadIdx.x] = s[threadIdx.x ^ 1];
    }
}
