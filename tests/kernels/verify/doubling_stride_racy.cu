// @verify_launch --grid 1 --block 128 -G --no-confirm
// @verify_barriers proved uniform
// @verify g race-free
// @verify s race certain 15 15
// An inclusive scan whose rounds double the distance (`off *= 2`) with one
// barrier per round: thread tid reads s[tid - off] while thread tid - off
// adds to it in the same round.
__global__ void doubling_scan_racy(float* g)
{
    __shared__ float s[128];
    int tid = threadIdx.x;
    s[tid] = g[tid];
    __syncthreads();
    for (int off = 1; off < blockDim.x; off *= 2) {
        if (tid >= off) s[tid] += s[tid - off];
        __syncthreads();
    }
    g[tid] = s[tid];
}
