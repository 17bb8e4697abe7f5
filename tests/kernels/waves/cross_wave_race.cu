// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:256 --arg buf:256
// @expect data-race global 12 16
// The launch runs in four waves of two blocks. Each block reads its slice of
// `data` and publishes a neighbour's element through shared memory after a
// barrier; block 5 (third wave) also overwrites data[0], which block 0 (first
// wave) read: nothing orders the two blocks, so this is a race whatever order
// the waves ran in.
__global__ void cross_wave_race(int* data, int* out)
{
    __shared__ int tile[32];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = data[g];
    __syncthreads();
    out[g] = tile[(threadIdx.x + 1) % blockDim.x];
    if (blockIdx.x == 5 && threadIdx.x == 0)
        data[0] = 7;
}
