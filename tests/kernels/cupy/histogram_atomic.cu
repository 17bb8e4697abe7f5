// @kernel histogram(?, ?, ?, ?)
// @atomics histogram 11:add.gpu
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:8 --arg 128 --arg 8
// @expect clean
// A histogram in global memory with atomicAdd: every increment counts.
extern "C" __global__ void histogram(const int* values, int* bins, int n, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = values[i] % nbins;
        atomicAdd(&bins[b], 1);
    }
}
