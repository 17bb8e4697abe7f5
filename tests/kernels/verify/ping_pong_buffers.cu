// @verify_launch --grid 1 --block 100 -G
// @verify_barriers proved uniform
// @verify buf race-free
// @verify g race-free
// A scan over two buffers that swap roles every round (`out = 1 - out`):
// the register only ever holds 0 or 1, and the same one in every thread
// of a round, so a round reads one buffer and writes the other. (Rows of
// 100: were `out` any value, 100 * out could wrap around onto the other row.)
__global__ void ping_pong_scan(float* g)
{
    __shared__ float buf[2][100];
    int tid = threadIdx.x;
    int out = 0, in = 1;
    buf[out][tid] = g[tid];
    __syncthreads();
    for (int off = 1; off < 100; off *= 2) {
        out = 1 - out;
        in = 1 - out;
        if (tid >= off)
            buf[out][tid] = buf[in][tid] + buf[in][tid - off];
        else
            buf[out][tid] = buf[in][tid];
        __syncthreads();
    }
    g[tid] = buf[out][tid];
}
