// @kernel all_atomics(int*, unsigned int*, int*)
// @atomics all_atomics 10:add.gpu 11:add.gpu 12:exch.gpu 13:min.gpu 14:max.gpu 15:inc.gpu 16:dec.gpu 17:cas.gpu 18:and.gpu 19:or.gpu 20:xor.gpu
// @launch --grid 1 --block 64 --arg buf:9 --arg buf:2 --arg buf:64
// @expect clean
// Every integer atomic read-modify-write, results kept so none becomes a reduction.
__global__ void all_atomics(int* a, unsigned int* u, int* out)
{
    int t = threadIdx.x;
    int r = 0;
    r += atomicAdd(&a[0], t);
    r += atomicSub(&a[1], t);
    r += atomicExch(&a[2], t);
    r += atomicMin(&a[3], t);
    r += atomicMax(&a[4], t);
    r += atomicInc(&u[0], 17u);
    r += atomicDec(&u[1], 17u);
    r += atomicCAS(&a[5], t, t + 1);
    r += atomicAnd(&a[6], t);
    r += atomicOr(&a[7], t);
    r += atomicXor(&a[8], t);
    out[t] = r;
}
