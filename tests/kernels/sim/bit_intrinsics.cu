// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:448
// @expect clean
// Bit-manipulation intrinsics on values spread over the 32-bit range.
__global__ void bits(const unsigned* in, unsigned* out)
{
    int t = threadIdx.x;
    unsigned x = in[t] * 0x9E3779B9u + 0x7F4A7C15u;
    unsigned y = x ^ (x >> 13) ^ 0xA5A5A5A5u;
    unsigned* o = out + 7 * t;
    o[0] = __popc(x);
    o[1] = __clz(x >> (t % 32));
    o[2] = __brev(x);
    o[3] = __byte_perm(x, y, 0x3000 | ((t & 7) << 8) | (((t >> 3) & 7) << 4) | (t % 5));
    o[4] = __funnelshift_l(x, y, t);
    o[5] = __ffs(x & (0xFFFFFFFFu << (t % 32)));
    o[6] = __popcll(((unsigned long long)x << 32) | y);
}
