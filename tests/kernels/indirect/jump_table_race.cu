// @launch --grid 1 --block 64 --arg buf:64
// @expect data-race shared 35 35
// A jump table: `brx.idx` branches to the label its index picks from a
// `.branchtargets` list (nvcc lowers a `switch` to compares and branches, so
// the table is written in inline PTX). Each case yields a slot of s; cases 3
// and 7 both yield slot 3, so threads 3 and 7 (and every eighth thread after
// them) write one element with no barrier between them.
__device__ __forceinline__ int slot_of(int c)
{
    int v;
    asm("{\n\t"
        ".reg .u32 i;\n\t"
        "and.b32 i, %1, 7;\n\t"
        "ts: .branchtargets L0, L1, L2, L3, L4, L5, L6, L7;\n\t"
        "brx.idx i, ts;\n"
        "L0: mov.u32 %0, 0; bra.uni done;\n"
        "L1: mov.u32 %0, 1; bra.uni done;\n"
        "L2: mov.u32 %0, 2; bra.uni done;\n"
        "L3: mov.u32 %0, 3; bra.uni done;\n"
        "L4: mov.u32 %0, 4; bra.uni done;\n"
        "L5: mov.u32 %0, 5; bra.uni done;\n"
        "L6: mov.u32 %0, 6; bra.uni done;\n"
        "L7: mov.u32 %0, 3;\n"
        "done:\n\t"
        "}"
        : "=r"(v)
        : "r"(c));
    return v;
}

__global__ void table(int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[8 * (t / 8) + slot_of(t)] = t;
    __syncthreads();
    out[t] = s[8 * (t / 8) + slot_of(t)];
}
