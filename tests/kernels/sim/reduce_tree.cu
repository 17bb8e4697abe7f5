// @launch --grid 4 --block 256 --arg buf:1024:iota --arg buf:4
// @expect clean
// Shared-memory tree reduction: one partial sum per block.
__global__ void reduce_tree(const float* in, float* out)
{
    __shared__ float partial[256];
    unsigned tid = threadIdx.x;
    partial[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}
