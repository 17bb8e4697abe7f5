// @kernel reduce_warp(const int*, int*)
// @shared reduce_warp 256
// @barriers reduce_warp 23
// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:1
// The classic warp-synchronous tail of a reduction on volatile shared memory.
// Correct only under lock-step execution: without __syncwarp the lanes of the
// last warp race under independent thread scheduling.
__device__ void warp_tail(volatile int* s, int tid)
{
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
    s[tid] += s[tid + 8];
    s[tid] += s[tid + 4];
    s[tid] += s[tid + 2];
    s[tid] += s[tid + 1];
}

__global__ void reduce_warp(const int* in, int* out)
{
    __shared__ int s[64];
    int tid = threadIdx.x;
    s[tid] = in[tid];
    __syncthreads();
    if (tid < 32)
        warp_tail(s, tid);
    if (tid == 0)
        out[0] = s[0];
}
