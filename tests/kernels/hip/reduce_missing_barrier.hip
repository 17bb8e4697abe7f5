// @kernel block_sum(const float*, float*, int)
// @shared block_sum 512
// @barriers block_sum 17
// @atomics block_sum 23:add.gpu
// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:1 --arg 256
// @expect data-race shared 20 20
// reduce_shared.hip without the barrier inside the loop: a thread adds a
// partial sum that another warp may not have finished writing.
#include <hip/hip_runtime.h>

__global__ void block_sum(const float* x, float* out, int n)
{
    __shared__ float partial[128];
    unsigned t = hipThreadIdx_x;
    unsigned i = hipBlockIdx_x * hipBlockDim_x + t;
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned s = hipBlockDim_x / 2; s > 0; s /= 2) {
        if (t < s)
            partial[t] += partial[t + s];
    }
    if (t == 0)
        atomicAdd(out, partial[0]);
}
