//pass
//--blockDim=64 --gridDim=2 --no-inline
// @expect clean
// The race-free twin of assume_sets_default.cu: `auto` gives `limit` a value below
// 100, as __assume states (the default, the thread count 128, would break it), and
// each thread below it writes its own element.
#include <cuda.h>

__global__ void below(int *A, int limit)
{
    __assume(limit < 100);
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < limit)
        A[gid] = gid;
}
