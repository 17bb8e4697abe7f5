// @verify_launch --grid 2 --block 64
// @verify y race certain 12 14
// @verify_labels y CI DI
// @verify_witness y n
// The index is 32-bit unsigned arithmetic, which wraps around 2^32: with
// unbounded integers i + n is at least 1 in the else branch, but for
// n = 2^32 - i it is 0, the element thread 0 writes. wrap_index_wide.cu
// computes the same index in 64 bits, where it never wraps.
__global__ void place(int* y, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) y[0] = 1;
    else
        y[i + n] = 2;
}
