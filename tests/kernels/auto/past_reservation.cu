// @launch --grid 1 --block 32
// @expect out-of-bounds global 9
// The last 16 threads write past the end of an automatic buffer's 64 MiB
// reservation, which stays out of bounds.
__global__ void past(int* a)
{
    int i = threadIdx.x;
    int last = (64 << 20) / 4 - 16;
    a[last + i] = i;
}
