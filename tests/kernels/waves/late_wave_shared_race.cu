// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:256
// @expect data-race shared 11 13
// Only block 6 (the last wave but one) skips the barrier between writing its
// shared tile and reading a neighbour's element: a shared-memory race in that
// block alone, which must be found although its wave ran last but one and its
// shared memory lives in the wave's own store.
__global__ void late_wave_shared_race(int* out)
{
    __shared__ int tile[32];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = g;
    if (blockIdx.x != 6) __syncthreads();
    out[g] = tile[(threadIdx.x + 1) % blockDim.x];
}
