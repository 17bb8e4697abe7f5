// @kernel shift_left(const float*, float*)
// @shared shift_left 128
// @warpsyncs shift_left 15
// @launch --grid 1 --block 32 --arg buf:32:iota --arg buf:32
// @expect clean
// warp_shift.hip with __syncwarp() between the store and the neighbour's
// load: every lane's store happens before every lane's load.
#include <hip/hip_runtime.h>

__global__ void shift_left(const float* x, float* y)
{
    __shared__ float s[32];
    unsigned lane = hipThreadIdx_x % warpSize;
    s[lane] = x[hipThreadIdx_x];
    __syncwarp();
    y[hipThreadIdx_x] = s[(lane + 1) % warpSize];
}
