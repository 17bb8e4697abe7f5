// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect clean
// cuda::barrier<thread_scope_block> in place of __syncthreads(): arrive_and_wait() compiles to mbarrier.arrive
// and a test_wait loop; completing the phase orders every thread's store before every thread's load. Thread t
// of block b writes out[64b + t] = in[64b + 63 - t]. Twin: barrier_read_before_wait.cu.
#include <cuda/barrier>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void reverse(const float* in, float* out)
{
    __shared__ float tile[64];
    __shared__ block_barrier bar;
    int i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x);
    __syncthreads();
    tile[threadIdx.x] = in[i];
    bar.arrive_and_wait();
    out[i] = tile[63 - threadIdx.x];
}
