// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:256
// @expect clean
// __shfl_sync, __shfl_up_sync, __shfl_xor_sync with full and sub-warp widths.
__global__ void shuffles(const int* in, int* out)
{
    int t = threadIdx.x;
    int v = in[t] * 10;
    out[4 * t + 0] = __shfl_sync(0xffffffffu, v, (t * 7) % 32);
    out[4 * t + 1] = __shfl_up_sync(0xffffffffu, v, 3);
    out[4 * t + 2] = __shfl_xor_sync(0xffffffffu, v, 5);
    out[4 * t + 3] = __shfl_down_sync(0xffffffffu, v, 2, 8);
}
