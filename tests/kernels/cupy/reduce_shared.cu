// @kernel block_sum(?, ?, ?)
// @shared block_sum 512
// @barriers block_sum 16 20
// @atomics block_sum 23:add.gpu
// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:1 --arg 256
// @expect clean
// A CuPy RawKernel (tests/frontend/test_cupy.py loads this text): a block's
// sum in shared memory, a barrier after every halving, one atomic per block.
extern "C" __global__ void block_sum(const float* x, float* out, int n)
{
    __shared__ float partial[128];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    // each thread's element, or 0 past the end
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s)
            partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(out, partial[0]);
}
