// @launch --grid 2 --search
// @expect data-race shared 15 15
// @expect uninitialized-read shared 17
// Written for blocks of at most 64 threads: each thread stages its element in slot t % 64 of a shared tile
// (wrapping, so that a larger block cannot write past the tile), and after the barrier reads its neighbour's
// slot. In a block of more than 64 threads, threads t and t + 64 write the same slot. No block size is given,
// so the input search chooses it, and has to try one above 64. In a block of fewer than 64 threads the last
// thread reads the slot after its own, which nobody wrote (line 17).
#define TILE 64
__global__ void stage(const int* in, int* out)
{
    __shared__ int tile[TILE];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    tile[t % TILE] = in[i];
    __syncthreads();
    out[i] = tile[(t + 1) % TILE];
}
