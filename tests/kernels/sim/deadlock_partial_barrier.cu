// @launch --grid 1 --block 32 --arg buf:32
// @expect barrier-divergence 9 12
// __syncthreads() reached by only half of the block: the other half exits without it.
__global__ void partial_barrier(int* out)
{
    int t = threadIdx.x;
    out[t] = t;
    if (t < 16) {
        __syncthreads();
        out[t] += 100;
    }
}
