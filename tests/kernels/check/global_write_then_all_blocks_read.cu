// @launch --grid 4 --block 32 --arg buf:1 --arg buf:128
// @expect data-race global 7 9
// Thread 0 of block 0 writes a flag word that every block reads after a
// barrier: the barrier orders block 0's own reads, not those of blocks 1-3.
__global__ void broadcast(int* g, int* out)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) g[0] = 1;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = g[0];
}
