// @kernel reduce(const int*, int*, int)
// @shared reduce 1024
// @barriers reduce 18
// @atomics reduce 25:add.gpu
// @launch --grid 2 --block 256 --arg buf:512:iota --arg buf:1 --arg 512
// @expect data-race shared 22 22
// A block-wide sum with a bug: the loop lacks the __syncthreads() between
// steps, so a thread can read partial[tid + s] before the thread that owns it
// has added its own pair in the previous step.
#define BLOCK 256

__global__ void reduce(const int* in, int* out, int n)
{
    __shared__ int partial[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    partial[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            // missing: __syncthreads() after this update
            partial[tid] += partial[tid + s];
    }
    if (tid == 0)
        atomicAdd(out, partial[0]);
}
