// @kernel recycle(int*, int*)
// @launch --arch compute_80 --grid 1 --block 32 --arg buf:32:iota --arg buf:32
// @expect clean
// The twin of source_overwrite.cu: the source is cleared after the wait that completes the copy.
#include <cuda_pipeline.h>

__global__ void recycle(int* data, int* out)
{
    __shared__ int tile[32];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&tile[t], &data[t], sizeof(int));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    data[t] = 0;
    __syncthreads();
    out[t] = tile[31 - t];
}
