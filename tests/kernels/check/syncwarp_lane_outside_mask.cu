// @launch --grid 1 --block 32 --arg buf:32
// @expect invalid-warp-sync 7
// Every lane calls __syncwarp with a mask of the lower half only.
__global__ void k(int* out)
{
    out[threadIdx.x] = threadIdx.x;
    __syncwarp(0x0000ffff);
}
