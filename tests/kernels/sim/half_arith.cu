// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:64 --arg buf:64
// @expect clean
// half arithmetic: conversions, add, multiply, fma and a comparison.
#include <cuda_fp16.h>

__global__ void half_ops(const float* in, __half* out, float* back)
{
    int t = threadIdx.x;
    __half x = __float2half(in[t] * 0.125f);
    __half y = __float2half(1.5f);
    __half z = __hadd(__hmul(x, y), __float2half(0.0625f));
    z = __hfma(z, x, y);
    out[t] = __hgt(z, __float2half(8.0f)) ? __hsub(z, y) : z;
    back[t] = __half2float(out[t]);
}
