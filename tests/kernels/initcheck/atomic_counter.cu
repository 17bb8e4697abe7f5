// @kernel count(int*)
// @shared count 4
// @barriers count 15
// @atomics count 14:add.cta
// @launch --grid 2 --block 64 --arg buf:2
// @expect uninitialized-read shared 14
// A per-block counter that is never zeroed: the first atomicAdd of each block adds to garbage (only the
// first one: every later one reads what an earlier one wrote). The twin atomic_counter_zeroed.cu zeroes it.

__global__ void count(int* out)
{
    __shared__ int n;
    int t = threadIdx.x;
    atomicAdd_block(&n, 1);
    __syncthreads();
    if (t == 0)
        out[blockIdx.x] = n;
}
