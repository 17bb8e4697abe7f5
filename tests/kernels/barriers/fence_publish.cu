// @launch --grid 2 --block 64 --arg buf:128 --arg buf:2 --arg buf:1 --redundant-barriers
// @expect clean
// Each thread writes its own slot, so no two threads of a block conflict
// across the barrier; but thread 0 then publishes the block's slots with
// __threadfence() and a flag, and block 1 reads block 0's slots after seeing
// it. The fence orders what the barrier ordered before it, so without the
// barrier the other threads' writes would race with block 1's reads: the
// barrier is needed.
__global__ void publish(int* data, int* flag, int* out)
{
    data[blockIdx.x * 64 + threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicExch(&flag[blockIdx.x], 1);
    }
    if (blockIdx.x == 1 && threadIdx.x == 0) {
        while (atomicAdd(&flag[0], 0) == 0) {}
        __threadfence();
        int sum = 0;
        for (int k = 0; k < 64; ++k) sum += data[k];
        out[0] = sum;
    }
}
