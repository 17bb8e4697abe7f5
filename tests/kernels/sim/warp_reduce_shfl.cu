// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:8
// @expect clean
// Warp reduction with __shfl_down_sync: lane 0 of each warp writes its warp's sum.
__global__ void warp_sum(const int* in, int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i] * in[i];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31) == 0)
        out[i / 32] = v;
}
