// @kernel warp_ops(const int*, int*)
// @warpsyncs warp_ops 20 22
// @launch --grid 1 --block 32 --arg buf:32:iota --arg buf:32
// @expect clean
// Warp-level primitives: shuffles, votes, match, active mask and __syncwarp.
__global__ void warp_ops(const int* in, int* out)
{
    unsigned full = 0xffffffffu;
    int lane = threadIdx.x & 31;
    int v = in[threadIdx.x];
    int s = __shfl_sync(full, v, 0);
    s += __shfl_up_sync(full, v, 1);
    s += __shfl_down_sync(full, v, 2);
    s += __shfl_xor_sync(full, v, 4);
    unsigned ballot = __ballot_sync(full, v > 0);
    int any = __any_sync(full, v > 1);
    int all = __all_sync(full, v > 2);
    unsigned active = __activemask();
    unsigned same = __match_any_sync(full, v);
    __syncwarp(full);
    if (lane < 16)
        __syncwarp(0x0000ffffu);
    out[threadIdx.x] = s + (int)ballot + any + all + (int)active + (int)same;
}
