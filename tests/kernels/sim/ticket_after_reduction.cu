// @kernel ticket_after_reduction(const float*, float*, float*)
// @shared ticket_after_reduction 257
// @barriers ticket_after_reduction 22 25 34
// @atomics ticket_after_reduction 31:inc.gpu
// @fences ticket_after_reduction 30:gpu 32:gpu
// @launch --grid 8 --block 64 --arg buf:1024:iota --arg buf:8 --arg buf:1
// @expect clean
// A last-block reduction after real work: every block reduces its slice in shared memory (barriers only),
// its leader publishes the partial sum, fences, draws a ticket and fences again, and the block that draws
// the last ticket adds the partial sums. Nothing before the first fence depends on the order of warps, so
// the reverse and flip schedules fork from schedule 0's run there (tests/sim/test_shared_prefix.py).
__device__ unsigned int tickets = 0;
__global__ void ticket_after_reduction(const float* in, float* partial, float* total)
{
    __shared__ float sums[64];
    __shared__ bool last;
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * 128 + t;
    float mine = in[i] + in[i + 64];
    sums[t] = mine;
    for (unsigned int s = 32; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s) sums[t] = mine = mine + sums[t + s];
    }
    __syncthreads();
    if (t == 0) {
        partial[blockIdx.x] = sums[0];
    }
    if (t == 0) {
        __threadfence();
        last = atomicInc(&tickets, gridDim.x) == gridDim.x - 1;
        __threadfence();
    }
    __syncthreads();
    if (last && t == 0) {
        float sum = 0;
        for (unsigned int b = 0; b < gridDim.x; b++)
            sum += partial[b];
        *total = sum;
    }
}
