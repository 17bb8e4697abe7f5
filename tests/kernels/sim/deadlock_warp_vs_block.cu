// @launch --grid 1 --block 64 --arg buf:64
// @expect deadlock 12 10
// Lanes 0-15 of warp 0 wait in __syncwarp for the whole warp, while every other
// thread waits in __syncthreads for them: neither can complete.
__global__ void warp_vs_block(int* out)
{
    int t = threadIdx.x;
    out[t] = t;
    if (t < 16)
        __syncwarp(0xffffffffu);
    else
        __syncthreads();
    out[t] += 1;
}
