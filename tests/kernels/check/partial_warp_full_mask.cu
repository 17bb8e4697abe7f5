// @launch --grid 2 --block 40 --arg buf:80
// @expect clean
// Blocks of 40 threads: the second warp of each block has 8 lanes. The full mask names lanes 8..31 of
// that warp, which do not exist; hardware does not wait for them, and neither may the simulator.
__global__ void partial_warp(int* out)
{
    __shared__ int s[40];
    int t = threadIdx.x;
    int v = t + __shfl_down_sync(0xffffffff, t, 1);
    s[t] = v;
    __syncwarp();
    out[blockIdx.x * 40 + t] = s[t ^ 1];  // a partner in the same warp: ordered by __syncwarp
}
