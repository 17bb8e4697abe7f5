// @launch --grid 2,2 --block 16,16 --arg buf:1024:iota --arg buf:1024 --arg 32
// @expect clean
// The same transpose with the barrier between filling and reading the tile.
__global__ void transpose(const float* in, float* out, int n)
{
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    int tx = blockIdx.y * 16 + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[(blockIdx.x * 16 + threadIdx.y) * n + tx] = tile[threadIdx.x][threadIdx.y];
}
