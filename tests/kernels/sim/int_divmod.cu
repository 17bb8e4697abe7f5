// @launch --grid 1 --block 64 --arg buf:64 --arg buf:64 --arg buf:256
// @expect clean
// Signed and unsigned integer division and modulo with negative operands (truncation toward zero).
__global__ void divmod(const int* a, const int* b, int* out)
{
    int t = threadIdx.x;
    int x = a[t], y = b[t];
    out[4 * t + 0] = x / y;
    out[4 * t + 1] = x % y;
    out[4 * t + 2] = (int)((unsigned)x / (unsigned)y);
    out[4 * t + 3] = (int)(((long long)x * 1000003LL) % (long long)y);
}
