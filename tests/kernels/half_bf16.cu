// @kernel mixed_precision(const __half*, const __half*, __half*, const __nv_bfloat16*, __nv_bfloat16*, __half*)
// @atomics mixed_precision 16:add.gpu
// @launch --grid 1 --block 32 --arg buf:32 --arg buf:32 --arg buf:32 --arg buf:32 --arg buf:32 --arg buf:1
// Half and bfloat16 arithmetic, with an fp16 atomic add.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void mixed_precision(const __half* a, const __half* b, __half* c,
                                const __nv_bfloat16* x, __nv_bfloat16* y, __half* acc)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half h = __hfma(a[i], b[i], __float2half(1.0f));
    c[i] = __hmul(h, h);
    __nv_bfloat16 bx = x[i];
    y[i] = __hadd(bx, __float2bfloat16(0.5f));
    atomicAdd(acc, h);
}
