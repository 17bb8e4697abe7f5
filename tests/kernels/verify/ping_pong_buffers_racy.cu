// @verify_launch --grid 1 --block 200 -G --no-confirm
// @verify_barriers proved uniform
// @verify b race possible 17 17
// @verify g race-free
// ping_pong_buffers.cu with buffers of 100 elements for 200 threads: the
// register still holds only 0 and 1, but a round's writes (row `out` and
// the next) overlap its reads (row `1 - out` and the next).
__global__ void ping_pong_scan_racy(float* g)
{
    __shared__ float b[3 * 100];
    int tid = threadIdx.x;
    int out = 0;
    b[tid] = g[tid];
    __syncthreads();
    for (int off = 1; off < 200; off *= 2) {
        out = 1 - out;
        b[out * 100 + tid] = b[(1 - out) * 100 + tid] + 1.0f;
        __syncthreads();
    }
    g[tid] = b[out * 100 + tid];
}
