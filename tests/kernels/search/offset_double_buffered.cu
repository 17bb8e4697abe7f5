// @launch --grid 2 --block 64 --search
// @expect clean
// The race-free twin of offset_shift.cu: the shifted copy goes to a second
// array, so whatever the offset, reads and writes never meet.
__global__ void shift(const int* a, int* b, int off)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    b[t + off] = a[t] + 1;
}
