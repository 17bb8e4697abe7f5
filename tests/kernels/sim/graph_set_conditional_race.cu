// @launch --grid 1 --block 64 --arg buf:1 --arg buf:64:iota
// @expect data-race global 9 9
// Every thread sets the graph condition (cudaGraphSetConditional: a store to the handle's condition, here a
// buffer): concurrent calls, which CUDA calls undefined behaviour, race as plain stores do.
__global__ void vote(unsigned* condition, const int* votes)
{
    cudaGraphConditionalHandle handle = (cudaGraphConditionalHandle)condition;
    int v = votes[threadIdx.x];
    cudaGraphSetConditional(handle, v > 32);
}
