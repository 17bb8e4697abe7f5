// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:250
// @expect out-of-bounds 8
// 256 threads write 250 elements: the last six threads of block 7, in the
// last wave, write past the end of the buffer. The finding must name block 7.
__global__ void late_wave_out_of_bounds(int* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = g;
}
