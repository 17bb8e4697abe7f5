// @verify_launch --grid 4 --block 64
// @verify base race-free
// @verify in race-free
// @verify out race-free
// Every thread adds the same loaded offset to its index: base is never
// written, so base[0] is one value in the whole grid and the stores stay
// apart (proved without --benign-same-value).
__global__ void offset_copy(const int* base, const int* in, int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[base[0] + i] = in[i];
}
