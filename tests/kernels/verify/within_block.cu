// @verify_launch --grid 4 --block 64 --within-block
// @verify out race-free
// @verify tile race-free
// @verify_barriers proved uniform
// With --within-block (Faial's default scope) only threads of one block are
// compared: every block writes out[0..63], each thread its own element, so
// this is race-free within each block, and racy across blocks (which
// `gpurace verify` without the option reports).
__global__ void rows(int* out)
{
    __shared__ int tile[64];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[63 - threadIdx.x];
}
