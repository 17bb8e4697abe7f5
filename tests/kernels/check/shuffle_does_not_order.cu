// @launch --grid 1 --block 32 --arg buf:32
// @expect data-race shared 9 10
// A shuffle between a shared write and a neighbour's read does not order the
// memory accesses (only __syncwarp does).
__global__ void k(int* out)
{
    __shared__ int s[32];
    int v = threadIdx.x;
    s[threadIdx.x] = v;
    v = __shfl_xor_sync(0xffffffff, v, 1) + s[(threadIdx.x + 1) % 32];
    out[threadIdx.x] = v;
}
