//xfail:NOT_ALL_VERIFIED
//--blockDim=64 --gridDim=2
// @expect data-race global 18 19
// @verify A race certain 18 19
// Written for GPUVerify, whose cuda.h declared cooperative groups: the file uses them without including
// <cooperative_groups.h>. As groups_unincluded.cu, but the block is synchronised only after the
// overwrite, so a thread's read of its neighbour's element races with the neighbour's write.
#include <cuda.h>

using namespace cooperative_groups;

__global__ void shift_left(int *A)
{
    thread_block block = this_thread_block();
    unsigned i = blockIdx.x * blockDim.x + block.thread_rank();
    int next = 0;
    if (block.thread_rank() + 1 < block.size())
        next = A[i + 1];
    A[i] = next;
    block.sync();
}
