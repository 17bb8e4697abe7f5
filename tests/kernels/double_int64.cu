// @kernel wide_math(const double*, double*, long long*, unsigned long long*, int)
// @atomics wide_math 13:add.gpu 14:or.gpu 15:add.gpu
// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:65 --arg buf:1 --arg buf:1 --arg 64
// Double precision and 64-bit integer arithmetic, with 64-bit atomics.
__global__ void wide_math(const double* x, double* y, long long* acc, unsigned long long* mask, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double v = x[i];
    y[i] = sqrt(v * v + 1.0) / (v - 3.0);
    long long q = (i * 0x100000001LL) / 7 - (i << 33);
    atomicAdd((unsigned long long*)acc, (unsigned long long)q);
    atomicOr(mask, 1ull << (i & 63));
    atomicAdd(&y[n], v);
}
