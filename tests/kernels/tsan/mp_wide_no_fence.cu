// @kernel mp_wide_no_fence(int4*, int*, int4*)
// @atomics mp_wide_no_fence 20:exch.gpu 22:add.gpu
// @launch --grid 2 --block 32 --arg u8:16 --arg buf:1 --arg u8:16 --detector tsan
// @expect data-race global 19 24
// mp_wide.cu without fences: the relaxed atomic flag forms no release or
// acquire pattern, so the 16-byte store races with the 16-byte load (one
// finding, although both shadow words of the payload see the race).
__global__ void mp_wide_no_fence(int4* data, int* flag, int4* result)
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
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        *result = *data;
    }
}
