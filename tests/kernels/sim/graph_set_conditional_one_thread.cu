// @launch --grid 1 --block 64 --arg buf:1 --arg buf:64:iota
// @expect clean
// The race-free twin of graph_set_conditional_race.cu: the votes are counted in shared memory and one thread
// sets the graph condition after the barrier.
__global__ void vote(unsigned* condition, const int* votes)
{
    __shared__ int yes;
    if (threadIdx.x == 0)
        yes = 0;
    __syncthreads();
    if (votes[threadIdx.x] > 32)
        atomicAdd(&yes, 1);
    __syncthreads();
    if (threadIdx.x == 0)
        cudaGraphSetConditional((cudaGraphConditionalHandle)condition, yes > 16);
}
