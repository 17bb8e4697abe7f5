// @kernel histogram(?, ?, ?, ?)
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:8 --arg 128 --arg 8
// @expect data-race global 10 10
// histogram_atomic.cu with a plain increment: threads of different blocks
// (and warps) read and write the same bin unordered.
extern "C" __global__ void histogram(const int* values, int* bins, int n, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        bins[values[i] % nbins] += 1;
}
