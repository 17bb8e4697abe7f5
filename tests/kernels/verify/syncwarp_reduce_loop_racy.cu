// @verify_launch --grid 2 --block 32 -G
// @verify s race certain 19 19
// @verify in race-free
// @verify out race-free
// @verify_labels s CI DI
// @verify_warp_barriers proved uniform in their masks (lanes 0xffffffff
// syncwarp_reduce_loop.cu without the __syncwarp() in the loop: a lane
// reads its partner's element while the partner may still be adding to it.
// The step (off >>= 1) is exact (16 shifted right by the iteration number),
// so the alarm is certain: lane 1 adds to s[1] while lane 0 reads it.
__global__ void reduce(float* out, const float* in)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 32 + t];
    __syncwarp();
    for (unsigned off = 16; off > 0; off >>= 1) {
        if (t < off)
            s[t] += s[t + off];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
