// @launch --grid 2 --search
// @expect uninitialized-read shared 14
// The race-free twin of tile_for_64_threads.cu: only the first 64 threads stage an element, so every block size
// the search tries is race-free. In a block of fewer than 64 threads the last thread reads a slot nobody wrote.
#define TILE 64
__global__ void stage(const int* in, int* out)
{
    __shared__ int tile[TILE];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    if (t < TILE)
        tile[t] = in[i];
    __syncthreads();
    out[i] = tile[(t + 1) % TILE];
}
