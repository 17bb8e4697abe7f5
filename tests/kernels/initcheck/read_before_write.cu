// @kernel shift(int*)
// @shared shift 512
// @barriers shift 15
// @launch --grid 2 --block 128 --arg buf:256
// @expect uninitialized-read shared 13
// Each thread reads its tile element before any thread of the block has written it: shared memory holds
// garbage when a block starts, so `prev` is garbage. The twin write_before_read.cu writes first.

__global__ void shift(int* out)
{
    __shared__ int tile[128];
    int t = threadIdx.x;
    int prev = tile[t];
    tile[t] = t;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = prev + tile[(t + 1) % 128];
}
