// @verify_launch --grid 4 --block 64
// @verify tile race-free
// @verify sums race-free
// @verify in race-free
// @verify_barriers proved uniform
// Each block walks over the input in tiles of 64, with a barrier after
// loading the tile and another before overwriting it: barriers in a loop
// that every thread of the block runs the same number of times.
__global__ void tile_sums(const float* in, float* sums, int tiles)
{
    __shared__ float tile[64];
    float acc = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        tile[threadIdx.x] = in[(blockIdx.x * tiles + t) * 64 + threadIdx.x];
        __syncthreads();
        acc += tile[(threadIdx.x + 1) % 64];
        __syncthreads();
    }
    sums[blockIdx.x * 64 + threadIdx.x] = acc;
}
