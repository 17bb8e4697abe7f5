// @kernel shift(int*)
// @shared shift 512
// @barriers shift 13
// @launch --grid 2 --block 128 --arg buf:256
// @expect clean
// The twin of read_before_write.cu: every element is written, then the barrier, then the reads.

__global__ void shift(int* out)
{
    __shared__ int tile[128];
    int t = threadIdx.x;
    tile[t] = t;
    __syncthreads();
    int prev = tile[t];
    out[blockIdx.x * blockDim.x + t] = prev + tile[(t + 1) % 128];
}
