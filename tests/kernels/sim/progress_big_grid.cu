// @launch --grid 100000 --block 32 --arg buf:3200000
// @expect clean
// A grid far larger than any GPU holds at once: every thread writes its global id.
__global__ void big_grid(unsigned* out)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = g ^ 0x5555u;
}
