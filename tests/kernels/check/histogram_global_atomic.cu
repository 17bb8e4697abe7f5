// @launch --grid 4 --block 64 --arg buf:256:iota --arg buf:8
// @expect clean
// The same histogram with atomic global updates.
__global__ void histogram(const unsigned* in, unsigned* bins)
{
    __shared__ unsigned local[8];
    unsigned t = threadIdx.x;
    if (t < 8) local[t] = 0;
    __syncthreads();
    atomicAdd(&local[in[blockIdx.x * 64 + t] % 8], 1u);
    __syncthreads();
    if (t < 8) atomicAdd(&bins[t], local[t]);
}
