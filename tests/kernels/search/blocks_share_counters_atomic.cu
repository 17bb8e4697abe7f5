// @launch --block 32 --search
// @expect clean
// The race-free twin of blocks_share_counters.cu: the additions are atomic,
// so any number of blocks may share the counters.
__global__ void accumulate(int* counters)
{
    atomicAdd(&counters[threadIdx.x], blockIdx.x);
}
