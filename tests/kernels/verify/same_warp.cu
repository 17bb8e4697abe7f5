// @verify_launch --grid 1 --block 32
// @verify s race certain 9 10
// @verify out race-free
// Lanes of one warp exchange values through shared memory without
// __syncwarp: under independent thread scheduling they race.
__global__ void swap_pairs(int* out)
{
    __shared__ int s[32];
    s[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}
