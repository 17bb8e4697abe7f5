// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:64
// @expect data-race shared 13 14
// @expect data-race global 15 15
// straight_line_memory.cu without its barrier, and with a shared output slot: each thread reads the
// neighbour's tile element that the neighbour writes in the same straight-line run, and pairs of threads
// store to one element of `out`.
__global__ void straight_line_memory_racy(const float* in, float* out)
{
    __shared__ float tile[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    float x = in[i] * 2.0f;
    tile[t] = x + 1.0f;
    float v = tile[(t + 1) & 63];
    out[i / 2] = v * x;
}
