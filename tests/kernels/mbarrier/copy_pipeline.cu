// @kernel reverse(const float*, float*)
// @launch --arch compute_80 --grid 2 --block 64 --arg buf:128:iota --arg buf:128
// @expect clean
// cuda::memcpy_async into shared memory, completed through a cuda::barrier: each thread's cp.async is tied
// to the barrier's phase by cp.async.mbarrier.arrive, and the wait for that phase orders every copy before
// every thread's read. Thread t of block b writes out[64b + t] = in[64b + 63 - t]. Twin: copy_pipeline_no_wait.cu.
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
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), bar);
    bar.arrive_and_wait();
    out[i] = tile[63 - threadIdx.x];
}
