// @kernel shift_left(const float*, float*)
// @shared shift_left 128
// @launch --grid 1 --block 32 --arg buf:32:iota --arg buf:32
// @expect data-race shared 15 16
// One warp shifts values left through shared memory with no __syncwarp
// between the store and the neighbour's load: lanes of a warp are scheduled
// independently (Volta and later), so lane i may read its neighbour's slot
// before the neighbour wrote it.
#include <hip/hip_runtime.h>

__global__ void shift_left(const float* x, float* y)
{
    __shared__ float s[32];
    unsigned lane = hipThreadIdx_x % warpSize;
    s[lane] = x[hipThreadIdx_x];
    y[hipThreadIdx_x] = s[(lane + 1) % warpSize];
}
