// @launch --grid 4 --block 64 --arg buf:256:iota --arg buf:256 --arg 2.0
// @expect clean
// Pointers to arrays given explicit buffers: `buf:256` counts elements of the
// arrays' scalar type (256 floats, four rows of 64). Each thread reads and
// writes only its own element.
__global__ void rows_scale(const float in[][64], float out[][64], float factor)
{
    int r = blockIdx.x, c = threadIdx.x;
    out[r][c] = factor * in[r][c];
}
