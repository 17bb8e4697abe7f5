// @kernel shift_left(?, ?)
// @shared shift_left 128
// @launch --grid 1 --block 32 --arg buf:32:iota --arg buf:32
// @expect data-race shared 12 13
// One warp shifts values left through shared memory with no __syncwarp
// between the store and the neighbour's load: lanes of a warp are scheduled
// independently (Volta and later), so lane i may read its neighbour's slot
// before the neighbour wrote it.
extern "C" __global__ void shift_left(const float* x, float* y)
{
    __shared__ float s[32];
    s[threadIdx.x] = x[threadIdx.x];
    y[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}
