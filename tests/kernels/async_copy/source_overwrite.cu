// @kernel recycle(int*, int*)
// @launch --arch compute_80 --grid 1 --block 32 --arg buf:32:iota --arg buf:32
// @expect data-race global 13 15
// Each thread copies its element to shared memory asynchronously, then clears the source before waiting:
// the copy may read the source at any time until the wait, so the store races with it (even though the
// same thread issued both). The twin source_overwrite_after_wait.cu clears it after the wait.
#include <cuda_pipeline.h>

__global__ void recycle(int* data, int* out)
{
    __shared__ int tile[32];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&tile[t], &data[t], sizeof(int));
    __pipeline_commit();
    data[t] = 0;
    __pipeline_wait_prior(0);
    __syncthreads();
    out[t] = tile[31 - t];
}
