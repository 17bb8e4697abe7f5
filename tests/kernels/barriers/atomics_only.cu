// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:32 --redundant-barriers
// @expect redundant-barrier 15
// A shared histogram filled in two passes of atomicAdd: the barrier between
// the passes separates only atomics, which never race with each other, so it
// is redundant; the first barrier (after the zeroing stores) and the last
// (before the plain reads) are needed.
__global__ void two_pass_histogram(const int* in, int* out)
{
    __shared__ int hist[16];
    unsigned t = threadIdx.x;
    int v = in[blockIdx.x * 128 + t];
    if (t < 16) hist[t] = 0;
    __syncthreads();
    atomicAdd(&hist[v % 16], 1);
    __syncthreads();
    atomicAdd(&hist[(v / 16) % 16], 1);
    __syncthreads();
    if (t < 16) out[blockIdx.x * 16 + t] = hist[t];
}
