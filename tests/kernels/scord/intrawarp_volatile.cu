// @kernel neighbours(volatile int*, int*)
// @launch --grid 1 --block 32 --arg buf:32 --arg buf:32
// @expect data-race global 14 15 warning
// @expect_ptx clean
// @expect_scord data-race global 14 15 error
// Intra-warp: each lane stores its slot, then reads its neighbour's, with no
// __syncwarp between. Lanes are scheduled independently (Volta and later), so
// under ScoRD's rules, where volatile is data, the pairs race (error, cause:
// the same warp); CUDA default: volatile is not atomic (warning); PTX: strong
// accesses (clean). The twin intrawarp_volatile_syncwarp.cu is clean.
__global__ void neighbours(volatile int* slot, int* out)
{
    int lane = threadIdx.x;
    slot[lane] = lane * 3;
    out[lane] = slot[(lane + 1) % 32];
}
