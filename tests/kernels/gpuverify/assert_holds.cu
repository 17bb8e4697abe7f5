//pass
//--blockDim=[32,2] --gridDim=3
// @expect clean
// Assertions that hold for every thread, written with GPUVerify's evaluable helpers.
#include <cuda.h>

__global__ void asserts_hold(unsigned *out)
{
    unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned gid = blockIdx.x * blockDim.x * blockDim.y + t;
    __assert(__is_pow2(blockDim.x));
    __assert(__mod_pow2(gid, 64u) == t);
    __assert(__implies(threadIdx.y == 1, t >= 32));
    __assert(__add_noovfl(gid, 1u, 2u));
    __global_assert(__add_noovfl_unsigned_int(gid, 1u) == gid + 1);
    out[gid] = __ite(t < 32, 1u, 2u);
}
