// @kernel dyn_copy(const float*, float*, int)
// @shared dyn_copy 16
// @barriers dyn_copy 17 19
// @atomics dyn_copy 18:add.cta
// @launch --grid 2 --block 128 --shared-bytes 512 --arg buf:256:iota --arg buf:256 --arg 256
// @expect clean
// Dynamic (extern) shared memory next to a static shared array.
extern __shared__ float dyn[];

__global__ void dyn_copy(const float* in, float* out, int n)
{
    __shared__ int tile_count[4];
    int t = threadIdx.x;
    if (t < 4)
        tile_count[t] = 0;
    dyn[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    atomicAdd_block(&tile_count[t & 3], 1);
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = dyn[blockDim.x - 1 - t] * tile_count[t & 3];
}
