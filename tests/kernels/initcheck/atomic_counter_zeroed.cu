// @kernel count(int*)
// @shared count 4
// @barriers count 15 17
// @atomics count 16:add.cta
// @launch --grid 2 --block 64 --arg buf:2
// @expect clean
// The twin of atomic_counter.cu: thread 0 zeroes the counter and a barrier orders that before the adds.

__global__ void count(int* out)
{
    __shared__ int n;
    int t = threadIdx.x;
    if (t == 0)
        n = 0;
    __syncthreads();
    atomicAdd_block(&n, 1);
    __syncthreads();
    if (t == 0)
        out[blockIdx.x] = n;
}
