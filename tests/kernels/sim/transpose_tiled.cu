// @launch --grid 2,3 --block 32,8 --arg buf:6144:iota --arg buf:6144 --arg 64 --arg 96
// @expect clean
// Tiled transpose of a rows x cols matrix (96 x 64) through 32x32 shared tiles padded to 33 columns.
#define TILE 32
#define ROWS_PER_PASS 8
__global__ void transpose(const float* in, float* out, int cols, int rows)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
