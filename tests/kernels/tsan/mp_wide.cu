// @kernel mp_wide(int4*, int*, int4*)
// @atomics mp_wide 23:exch.gpu 25:add.gpu
// @fences mp_wide 22:gpu 27:gpu
// @launch --grid 2 --block 32 --arg u8:16 --arg buf:1 --arg u8:16 --detector tsan
// @expect clean
// Message passing between blocks with a 16-byte payload: block 0 stores an
// int4 (one 16-byte access, split into two shadow words), fences and raises
// an atomic flag; block 1 spins on the flag with an atomic read, fences (the
// acquire pattern) and loads the int4. Both words of the payload are ordered.
__global__ void mp_wide(int4* data, int* flag, int4* result)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        int4 v;
        v.x = 1;
        v.y = 2;
        v.z = 3;
        v.w = 4;
        *data = v;
        __threadfence();
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        __threadfence();
        *result = *data;
    }
}
