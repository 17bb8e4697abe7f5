// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:4
// @expect clean
// Warp reduction with shuffles: registers only, nothing to race on.
__global__ void reduce(const int* in, int* out)
{
    int v = in[blockIdx.x * 64 + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x % 32 == 0) out[blockIdx.x * 2 + threadIdx.x / 32] = v;
}
