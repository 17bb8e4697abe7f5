// @launch --grid 1 --block 128 --arg buf:128:iota --arg buf:1
// @expect data-race shared 12 12
// A tree reduction that skips the barrier for the last step: thread 1
// writes s[1] at k = 2, and thread 0 reads s[1] at k = 1 with nothing between.
__global__ void reduce(const int* in, int* out)
{
    __shared__ int s[128];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (unsigned k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        if (k > 2) __syncthreads();
    }
    if (t == 0) *out = s[0];
}
