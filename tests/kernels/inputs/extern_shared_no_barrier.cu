// @launch --grid 2 --block 128
// @expect data-race shared 10 11
// The twin of extern_shared_reverse.cu without its barrier: with an automatic
// dynamic shared size the accesses are in bounds, and the read of another
// thread's element races with its write.
extern __shared__ float tile[];
__global__ void reverse(const float* in, float* out)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = in[i];
    out[i] = tile[blockDim.x - 1 - t];
}
