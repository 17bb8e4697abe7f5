// @verify_launch --grid 4 --block 8,8
// @verify_barriers proved uniform
// @verify cells race-free
// @verify s race-free
// A closure step: a thread whose cell is empty fills it when its row and
// column meet a full cell at k. Thread (y, k) tests s[y][k] twice, as its
// own cell (empty) and as the row's cell k (full): both loads read the same
// bytes in one barrier interval, so unless s races they agree, and that
// thread never writes the cell the others of its row read.
__global__ void close_paths(unsigned* cells)
{
    __shared__ unsigned s[8][8];
    unsigned* tile = cells + blockIdx.x * 64;
    s[threadIdx.y][threadIdx.x] = tile[threadIdx.y * 8 + threadIdx.x];
    __syncthreads();
    for (unsigned k = 0; k < 8; ++k) {
        if (s[threadIdx.y][threadIdx.x] == 0 && s[threadIdx.y][k] != 0 && s[k][threadIdx.x] != 0)
            s[threadIdx.y][threadIdx.x] = k + 1;
        __syncthreads();
    }
    tile[threadIdx.y * 8 + threadIdx.x] = s[threadIdx.y][threadIdx.x];
}
