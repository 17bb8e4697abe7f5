// @verify_launch --grid 1 --block 64 --no-confirm
// @verify s race possible 10 12
// @verify out race-free
// @verify_warp_barriers not used to order accesses: the mask at tests/kernels/verify/syncwarp_variable_mask.cu:11 is not a constant
// A mask verify cannot pin down to a constant orders nothing in its model:
// the exchange is a possible race (with mask 0xffffffff it is not one).
__global__ void exchange(int* out, unsigned mask)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp(mask);
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}
