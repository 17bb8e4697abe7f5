// @kernel stages(const int*, int*)
// @launch --arch compute_80 --grid 1 --block 32 --arg buf:64:iota --arg buf:64
// @expect data-race shared 15 19
// @expect uninitialized-read shared 19
// wait_prior_older.cu reading the newer tile `b` after __pipeline_wait_prior(1): that wait leaves the
// newest group in flight, so the read races with the copies into `b` (and reads bytes nothing has written).
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
    out[t] = b[31 - t];
    __pipeline_wait_prior(0);
    __syncthreads();
    out[32 + t] = a[31 - t];
}
