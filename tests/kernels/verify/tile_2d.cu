// @verify_launch --grid 4,4 --block 16,16
// @verify in race-free
// @verify out race certain 13 13
// @verify_labels out CI DI
// @verify_witness out w
// A two-dimensional copy whose row width is a parameter: for a width below
// 64 (the launch's x extent) rows overlap and two threads write one element.
// The race needs a parameter value, and the witness names it.
__global__ void copy2d(float* out, const float* in, int w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * w + x] = in[y * w + x];
}
