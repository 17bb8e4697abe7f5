// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:256:iota --arg buf:256 --arg 4294967311 --arg 256
// @expect clean
// 64-bit integer arithmetic: products and sums past 2^32, a signed shift and a compare.
__global__ void lmad(const long long* a, const long long* b, long long* c, long long k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        long long v = a[i] * k - b[i] * 3;
        c[i] = (v > (1LL << 40)) ? (v >> 3) : -v;
    }
}
