// @kernel stencil(const int*, int*)
// @shared stencil 516
// @barriers stencil 17
// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:256
// @expect uninitialized-read shared 18
// A 1-D stencil whose halo is never loaded: the block writes tile[0..127] but thread 127 also reads
// tile[128], which no thread of the block writes (the halo load is missing). Every other element read
// was written.

__global__ void stencil(const int* in, int* out)
{
    __shared__ int tile[129];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = in[i];
    // missing: if (t == blockDim.x - 1) tile[t + 1] = in[i + 1];
    __syncthreads();
    out[i] = tile[t] + tile[t + 1];
}
