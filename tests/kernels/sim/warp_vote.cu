// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:384
// @expect clean
// Warp vote and match intrinsics over a predicate that depends on the input value.
__global__ void warp_vote(const int* in, unsigned* out)
{
    int t = threadIdx.x;
    int v = in[t];
    unsigned* o = out + 6 * t;
    o[0] = __ballot_sync(0xffffffffu, v % 3 == 0);
    o[1] = __any_sync(0xffffffffu, v == 40);
    o[2] = __all_sync(0xffffffffu, v < 60);
    o[3] = __match_any_sync(0xffffffffu, v / 5);
    o[4] = __popc(__ballot_sync(0xffffffffu, v & 1));
    if (t % 4 != 3)
        o[5] = __activemask();
    else
        o[5] = 0;
}
