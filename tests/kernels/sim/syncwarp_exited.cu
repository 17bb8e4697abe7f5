// @launch --grid 1 --block 32 --arg buf:32
// @expect invalid-warp-sync 14
// The upper half of the warp returns early; the lower half works a while, then
// synchronises with a full mask that still names the exited lanes.
__global__ void syncwarp_exited(int* out)
{
    int t = threadIdx.x;
    if (t >= 16)
        return;
    int acc = 0;
    for (int i = 0; i < t + 4; ++i)
        acc += i * t;
    out[t] = acc;
    __syncwarp(0xffffffffu);
    out[t + 16] = out[t] + out[(t + 1) % 16];
}
