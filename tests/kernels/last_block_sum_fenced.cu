// @kernel last_block_sum_fenced(const float*, float*, float*)
// @shared last_block_sum_fenced 1
// @barriers last_block_sum_fenced 21
// @atomics last_block_sum_fenced 18:inc.gpu
// @fences last_block_sum_fenced 17:gpu 19:gpu
// @launch --grid 4 --block 32 --arg buf:4:iota --arg buf:4 --arg buf:1
// @expect clean
// last_block_sum.cu with a fence after the ticket: the leader's atomicInc reads the release sequence of
// every block's ticket and the fence after it completes the acquire, so the partial sums it reads next
// are ordered after their stores.
__device__ unsigned int tickets = 0;
__global__ void last_block_sum_fenced(const float* in, float* partial, float* total)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        last = atomicInc(&tickets, gridDim.x) == gridDim.x - 1;
        __threadfence();
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float sum = 0;
        for (int i = 0; i < gridDim.x; i++)
            sum += partial[i];
        *total = sum;
    }
}
