// --gridDim=[2,2]
// @verify_launch --within-block
// @verify out race-free
// Faial's header form (`// --gridDim=...`, a space after the slashes) gives
// the grid only: the block stays open. The kernel reads gridDim.y but no
// index and no block size along y, so blocks are one thread deep there (a
// scope line says so) and the global index along x tells a block's threads
// apart. Across blocks (without --within-block) the two blocks along y run
// each index twice: a race.
__global__ void shift(int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i + gridDim.y] = i;
}
