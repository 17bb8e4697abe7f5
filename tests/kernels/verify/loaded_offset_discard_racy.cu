// @verify_launch --grid 4 --block 64 --no-confirm
// @verify base race-free
// @verify in race-free
// @verify out race possible 14 14
// loaded_offset.cu after a `discard` of base's cache line: its bytes are
// unspecified until written, so two threads' loads of base[0] need not
// agree (verify then takes no load of any object as the memory's
// contents).
__global__ void offset_copy_discard(const int* base, const int* in, int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        asm volatile("discard.global.L2 [%0], 128;" ::"l"(base) : "memory");
    out[base[0] + i] = in[i];
}
