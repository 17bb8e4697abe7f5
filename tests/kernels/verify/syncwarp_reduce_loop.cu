// @verify_launch --grid 2 --block 32 -G
// @verify s race-free
// @verify in race-free
// @verify out race-free
// @verify_warp_barriers proved uniform in their masks (lanes 0xffffffff
// A warp reduction in shared memory with __syncwarp() after each step, as
// Volta and later need it; compiled with -G, where __syncwarp is a call.
__global__ void reduce(float* out, const float* in)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 32 + t];
    __syncwarp();
    for (unsigned off = 16; off > 0; off >>= 1) {
        if (t < off)
            s[t] += s[t + off];
        __syncwarp();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
