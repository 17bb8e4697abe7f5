// @launch --grid 4 --block 32 --arg buf:128:iota --arg buf:4 --arg buf:1 --arg buf:1
// @expect data-race global 11 18
// The threadfence reduction without the producer's fence: the ticket does
// not publish the partial sum, so the last block's read of it races.
__global__ void sum(const int* in, int* partial, unsigned* ticket, int* total)
{
    __shared__ bool last;
    int v = 0;
    for (int i = 0; i < 32; ++i) v += in[blockIdx.x * 32 + i];
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = v;
        last = atomicInc(ticket, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        int s = 0;
        for (int b = 0; b < gridDim.x; ++b) s += partial[b];
        *total = s;
    }
}
