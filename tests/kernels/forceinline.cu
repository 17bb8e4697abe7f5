// @kernel inlined(const int*, int*)
// @shared inlined 256
// @barriers inlined 17
// @atomics inlined 11:add.gpu
// @fences inlined 25:cta
// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:1
// @expect clean
// Force-inlined helpers two levels deep: their code keeps inlined_at locations.
__device__ __forceinline__ void add_to(int* counter, int v)
{
    atomicAdd(counter, v);
}

__device__ __forceinline__ void publish(int* s, int* counter, int v)
{
    s[threadIdx.x] = v;
    __syncthreads();
    add_to(counter, s[(threadIdx.x + 1) % blockDim.x]);
}

__global__ void inlined(const int* in, int* counter)
{
    __shared__ int s[64];
    publish(s, counter, in[threadIdx.x]);
    __threadfence_block();
}
