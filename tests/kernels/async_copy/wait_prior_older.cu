// @kernel stages(const int*, int*)
// @launch --arch compute_80 --grid 1 --block 32 --arg buf:64:iota --arg buf:64
// @expect clean
// Two groups in flight: __pipeline_wait_prior(1) completes every group but the newest, so after it (and a
// barrier) the older group's tile `a` may be read; the newer tile `b` waits for __pipeline_wait_prior(0).
// The twin wait_prior_newer.cu reads `b` after the first wait.
#include <cuda_pipeline.h>

__global__ void stages(const int* in, int* out)
{
    __shared__ int a[32], b[32];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&a[t], &in[t], sizeof(int));
    __pipeline_commit();
    __pipeline_memcpy_async(&b[t], &in[32 + t], sizeof(int));
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    out[t] = a[31 - t];
    __pipeline_wait_prior(0);
    __syncthreads();
    out[32 + t] = b[31 - t];
}
