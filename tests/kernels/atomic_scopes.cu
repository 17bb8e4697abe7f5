// @kernel scoped(int*, float*, unsigned long long*, int*)
// @atomics scoped 8:add.cta 9:add.gpu 10:add.sys 11:cas.cta 12:exch.sys 13:add.gpu 14:add.gpu
// @launch --grid 2 --block 64 --arg buf:5 --arg buf:1 --arg buf:1 --arg buf:128
// The same atomics at block, device and system scope, including float and 64-bit ones.
__global__ void scoped(int* counters, float* fsum, unsigned long long* big, int* out)
{
    int t = threadIdx.x;
    int a = atomicAdd_block(&counters[0], 1);
    int b = atomicAdd(&counters[1], 1);
    int c = atomicAdd_system(&counters[2], 1);
    int d = atomicCAS_block(&counters[3], 0, t);
    int e = atomicExch_system(&counters[4], t);
    float f = atomicAdd(fsum, 0.5f);
    unsigned long long g = atomicAdd(big, 1ull);
    out[t] = a + b + c + d + e + (int)f + (int)g;
}
