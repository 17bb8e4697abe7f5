// @verify_launch --grid 4 --block 64
// @verify tile race certain 14 16
// @verify_labels tile CI DI
// @verify in race-free
// @verify sums race-free
// @verify_barriers proved uniform
// tiles_in_loop.cu without the second barrier: a fast thread overwrites its
// tile element for the next tile while a neighbour still reads the old one.
__global__ void tile_sums(const float* in, float* sums, int tiles)
{
    __shared__ float tile[64];
    float acc = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        tile[threadIdx.x] = in[(blockIdx.x * tiles + t) * 64 + threadIdx.x];
        __syncthreads();
        acc += tile[(threadIdx.x + 1) % 64];
    }
    sums[blockIdx.x * 64 + threadIdx.x] = acc;
}
