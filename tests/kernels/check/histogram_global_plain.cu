// @launch --grid 4 --block 64 --arg buf:256:iota --arg buf:8
// @expect data-race global 15 15
// Shared-memory histogram with atomics, then every block adds its bins to
// the global histogram with a plain +=: blocks race on the global bins.
__global__ void histogram(const unsigned* in, unsigned* bins)
{
    __shared__ unsigned local[8];
    unsigned t = threadIdx.x;
    if (t < 8) local[t] = 0;
    __syncthreads();
    atomicAdd(&local[in[blockIdx.x * 64 + t] % 8], 1u);
    __syncthreads();
    if (t < 8) {
        unsigned v = local[t];
        bins[t] += v;
    }
}
