// @kernel reduce(const int*, int*, int)
// @shared reduce 1024
// @barriers reduce 16 20
// @atomics reduce 23:add.gpu
// @launch --grid 2 --block 256 --arg buf:512:iota --arg buf:1 --arg 512
// @expect clean
// Tree reduction in shared memory; each block adds its partial sum to *out.
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
            partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(out, partial[0]);
}
