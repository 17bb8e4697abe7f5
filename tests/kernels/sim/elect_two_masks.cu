// @kernel leaders(int*)
// @launch --arch sm_90 --grid 1 --block 32 --arg buf:4
// @expect data-race global 19 19
// elect_one_per_warp.cu with the warp split in halves that elect with their own masks: each half has a
// leader (lanes 0 and 16), and both write the warp's one slot, unordered.
__device__ __forceinline__ bool elect(unsigned mask)
{
    unsigned elected;
    asm volatile("{\n .reg .pred p;\n .reg .b32 d;\n elect.sync d|p, %1;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(elected) : "r"(mask));
    return elected;
}

__global__ void leaders(int* out)
{
    unsigned lane = threadIdx.x % 32;
    bool leader = lane < 16 ? elect(0x0000ffffu) : elect(0xffff0000u);
    if (leader)
        out[0] = (int)lane;
}
