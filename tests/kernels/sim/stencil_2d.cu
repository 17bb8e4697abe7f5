// @launch --grid 3,2 --block 16,16 --arg buf:1536:iota --arg buf:1536 --arg 48 --arg 32
// @expect clean
// 5-point Jacobi step on a 32 x 48 grid; boundary cells are copied.
__global__ void jacobi(const float* in, float* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        out[i] = in[i];
    else
        out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]) - in[i];
}
