// @launch --grid 1 --block 64 --arg buf:64
// @expect out-of-bounds global 6
// Thread 63 writes one element past the end.
__global__ void k(int* out)
{
    out[threadIdx.x + 1] = 1;
}
