// @verify_launch --grid 1 --block 128 -G
// @verify_barriers proved uniform
// @verify g race-free
// @verify t race-free
// A work-efficient scan's two sweeps: the stride doubles (`offset *= 2`,
// `d *= 2`) and halves (`d >>= 1`, `offset >>= 1`) in every round. Such a
// register is its entry value shifted by the round number, exactly, so the
// threads of one round agree on it and the rounds end where they should;
// `d < 256` is signed, so `d` cannot overflow, and every thread leaves the
// second loop in the same round before the barrier after it.
__global__ void sweep_scan(int* g)
{
    __shared__ int t[256];
    int tid = threadIdx.x;
    int offset = 1;
    t[2 * tid] = g[2 * tid];
    t[2 * tid + 1] = g[2 * tid + 1];
    for (int d = 256 >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d)
            t[offset * (2 * tid + 2) - 1] += t[offset * (2 * tid + 1) - 1];
        offset *= 2;
    }
    if (tid == 0)
        t[255] = 0;
    for (int d = 1; d < 256; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int x = t[offset * (2 * tid + 1) - 1];
            t[offset * (2 * tid + 1) - 1] = t[offset * (2 * tid + 2) - 1];
            t[offset * (2 * tid + 2) - 1] += x;
        }
    }
    __syncthreads();
    g[2 * tid] = t[2 * tid];
    g[2 * tid + 1] = t[2 * tid + 1];
}
