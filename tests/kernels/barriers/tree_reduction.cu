// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:2 --redundant-barriers
// @expect clean
// A tree reduction: every barrier orders a write of one thread before a read
// by another (the first one the loads, the loop's one each step), so none is
// redundant.
__global__ void reduce(const int* in, int* out)
{
    __shared__ int s[128];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    for (unsigned k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
