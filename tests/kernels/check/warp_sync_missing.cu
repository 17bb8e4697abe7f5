// @launch --grid 1 --block 32 --arg buf:32
// @expect data-race shared 8 9
// Lanes exchange values through shared memory without __syncwarp: under
// independent thread scheduling a lane may read before its neighbour wrote.
__global__ void rotate(int* out)
{
    __shared__ int s[32];
    s[threadIdx.x] = threadIdx.x * 3;
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}
