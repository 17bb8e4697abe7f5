// @verify_launch --grid 1 --block 32
// @verify dynamic_shared_memory_(a,_b) race certain 12 13
// @verify out race-free
// @verify_barriers proved uniform
// Two extern __shared__ arrays are the same memory (the block's dynamic
// shared memory), whatever their names and types: thread t's write to b[t+1]
// and thread t+1's write to a[t+1] are the same four bytes.
__global__ void views(float* out)
{
    extern __shared__ float a[];
    extern __shared__ int b[];
    a[threadIdx.x] = 1.0f;
    b[threadIdx.x + 1] = 2;
    __syncthreads();
    out[threadIdx.x] = a[threadIdx.x];
}
