// @kernel calls(const int*, int*, unsigned int*)
// @shared calls 512
// @barriers calls 11 27
// @atomics calls 20:add.gpu
// @launch --grid 1 --block 128 --arg buf:128:iota --arg buf:128 --arg buf:1
// @expect clean
// Non-inlined device functions: a barrier and an atomic inside callees.
__device__ __noinline__ int block_total(int* s, int v)
{
    s[threadIdx.x] = v;
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < blockDim.x; ++k)
        sum += s[k];
    return sum;
}

__device__ __noinline__ void bump(unsigned int* c, unsigned int by)
{
    atomicAdd(c, by);
}

__global__ void calls(const int* in, int* out, unsigned int* count)
{
    __shared__ int s[128];
    int total = block_total(s, in[threadIdx.x]);
    __syncthreads();
    out[threadIdx.x] = total;
    if (threadIdx.x == 0)
        bump(count, (unsigned int)total);
}
