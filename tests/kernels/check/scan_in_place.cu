// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:64
// @expect data-race shared 12 12
// Hillis-Steele scan updated in place: a thread reads s[t - d] while thread
// t - d overwrites it in the same step (the barrier separates steps only).
__global__ void scan(const int* in, int* out)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (unsigned d = 1; d < 64; d <<= 1) {
        if (t >= d) s[t] += s[t - d];
        __syncthreads();
    }
    out[t] = s[t];
}
