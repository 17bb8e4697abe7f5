// @verify_launch --grid 4 --block 8,8 --no-confirm
// @verify_barriers proved uniform
// @verify cells race-free
// @verify s race possible 15 16
// reread_own_cell.cu filling the next cell of the row instead of its own:
// thread (y, k - 1) writes s[y][k] while the others read it, so thread
// (y, k)'s two loads of its cell may disagree and rereads prove nothing.
__global__ void close_paths_racy(unsigned* cells)
{
    __shared__ unsigned s[8][8];
    unsigned* tile = cells + blockIdx.x * 64;
    s[threadIdx.y][threadIdx.x] = tile[threadIdx.y * 8 + threadIdx.x];
    __syncthreads();
    for (unsigned k = 0; k < 8; ++k) {
        if (s[threadIdx.y][threadIdx.x] == 0 && s[threadIdx.y][k] != 0 && s[k][threadIdx.x] != 0)
            s[threadIdx.y][(threadIdx.x + 1) % 8] = k + 1;
        __syncthreads();
    }
    tile[threadIdx.y * 8 + threadIdx.x] = s[threadIdx.y][threadIdx.x];
}
