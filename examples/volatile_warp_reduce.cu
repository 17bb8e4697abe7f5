// @kernel warp_reduce(const int*, int*)
// @shared warp_reduce 256
// @barriers warp_reduce 20
// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:1
// @expect data-race shared 24 24 warning
// @expect_ptx clean
// @expect_scord data-race shared 24 24 error
// The classic warp-synchronous last steps of a reduction on volatile shared
// memory. Before Volta the lanes ran in lockstep; with independent thread
// scheduling nothing orders a lane's read of s[t + k] against the owner's
// update in the previous step. Under the PTX model volatile is .relaxed.sys,
// so the conflicts are "strong" and not reported; under gpurace's default
// model volatile is not atomic and the unordered conflicts are a warning
// (--model scord: volatile is data, an error). The fix is __syncwarp().
__global__ void warp_reduce(const int* in, int* out)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) {
        volatile int* v = s;
        for (int k = 32; k > 0; k >>= 1)
            v[t] += v[t + k];
    }
    if (t == 0)
        *out = s[0];
}
