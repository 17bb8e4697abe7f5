// @launch --grid 2 --block 64 --search --redundant-barriers
// @expect clean
// Whether the barrier is needed depends on off: with the default (the thread
// count, 128) each thread reads back its own slot and the barrier orders
// nothing, with most other offsets a thread reads another's slot. A barrier
// is redundant only if no input needs it, so the search, which tries many
// offsets, reports nothing.
__global__ void rotate(int* out, int off)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = t * 3;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[(t + off) % 64];
}
