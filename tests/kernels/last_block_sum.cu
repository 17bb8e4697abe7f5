// @kernel last_block_sum(const float*, float*, float*)
// @shared last_block_sum 1
// @barriers last_block_sum 22
// @atomics last_block_sum 20:inc.gpu
// @fences last_block_sum 19:gpu
// @launch --grid 4 --block 32 --arg buf:4:iota --arg buf:4 --arg buf:1
// @expect data-race global 18 26
// The last-block reduction: each block's leader stores its partial sum, fences, and takes a ticket; the
// leader that draws the last ticket sums the partial sums. The tickets form a release sequence that
// carries every block's store, but the last leader reads the partial sums right after its atomicInc with
// no fence after it, so under the PTX memory model nothing acquires them: a race ("missing fence after the
// flag read"). last_block_sum_fenced.cu is the same with the fence.
__device__ unsigned int tickets = 0;
__global__ void last_block_sum(const float* in, float* partial, float* total)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        last = atomicInc(&tickets, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float sum = 0;
        for (int i = 0; i < gridDim.x; i++)
            sum += partial[i];
        *total = sum;
    }
}
