// @kernel warp_sum(const int*, int*)
// @shared warp_sum 128
// @warpsyncs warp_sum 12 17 20
// @launch --grid 1 --block 32 --arg buf:32:iota --arg buf:1
// @expect clean
// A warp reduction made safe with __syncwarp between steps.
__global__ void warp_sum(const int* in, int* out)
{
    __shared__ int s[32];
    int lane = threadIdx.x;
    s[lane] = in[lane];
    __syncwarp();
    for (int off = 16; off > 0; off /= 2) {
        int v = 0;
        if (lane < off)
            v = s[lane + off];
        __syncwarp();
        if (lane < off)
            s[lane] += v;
        __syncwarp();
    }
    if (lane == 0)
        out[0] = s[0];
}
