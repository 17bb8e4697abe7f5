// @kernel leaders(int*, int*)
// @launch --arch sm_90 --grid 2 --block 64 --arg buf:16 --arg buf:4
// @expect clean
// elect.sync picks one leader among the lanes its mask names: with the full mask lane 0 of each warp
// records the warp (out[warp]), with the odd lanes' mask (only they run it) the lowest odd lane, 1, adds one
// to its block's count. Each location has one writer. Twin: elect_two_masks.cu.
__device__ __forceinline__ bool elect(unsigned mask, unsigned &leader)
{
    unsigned elected;
    asm volatile("{\n .reg .pred p;\n elect.sync %0|p, %2;\n selp.u32 %1, 1, 0, p;\n}"
                 : "=r"(leader), "=r"(elected) : "r"(mask));
    return elected;
}

__global__ void leaders(int* out, int* counts)
{
    unsigned lane = threadIdx.x % 32, leader;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (elect(0xffffffffu, leader))
        out[warp] = 100 * warp + (int)leader;
    if (lane & 1) {
        if (elect(0xaaaaaaaau, leader) && leader == 1)
            atomicAdd(&counts[blockIdx.x], 1);
    }
}
