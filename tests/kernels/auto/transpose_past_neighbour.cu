// @launch --grid 4,4 --block 16,16
// @expect out-of-bounds global 15
// A transpose whose write index uses the wrong stride: x * 1,048,576 floats
// lands up to 252 MiB past the start of `out`, past its 64 MiB reservation,
// where the automatic buffers `in` and `flags` would be if buffers were
// packed 16 MiB apart. Every such write is out of bounds, and none is taken
// for an access to `in` or `flags` (no race with their reads and writes).
__global__ void transpose(float *out, const float *in, int *flags)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int width = gridDim.x * blockDim.x;
    flags[y * width + x] = x;
    long wrong_stride = 1 << 20;
    out[x * wrong_stride + y] = in[y * width + x];
}
