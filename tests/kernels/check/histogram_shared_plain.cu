// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:8
// @expect data-race shared 10 10
// Shared bins incremented with a plain ++ by every thread.
__global__ void histogram(const unsigned* in, unsigned* bins)
{
    __shared__ unsigned local[8];
    unsigned t = threadIdx.x;
    if (t < 8) local[t] = 0;
    __syncthreads();
    local[in[t] % 8]++;
    __syncthreads();
    if (t < 8) bins[t] = local[t];
}
