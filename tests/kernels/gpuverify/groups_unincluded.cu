//pass
//--blockDim=64 --gridDim=2
// @expect clean
// @verify A race-free
// @verify_barriers proved uniform
// Written for GPUVerify, whose cuda.h declared cooperative groups: the file uses them without including
// <cooperative_groups.h>. Each thread reads its right neighbour's element, the block synchronises
// (GPUVerify's synchronize(group), which is group.sync()), and each thread then overwrites its own.
#include <cuda.h>

using namespace cooperative_groups;

__global__ void shift_left(int *A)
{
    thread_block block = this_thread_block();
    unsigned i = blockIdx.x * blockDim.x + block.thread_rank();
    int next = block.thread_rank() + 1 < block.size() ? A[i + 1] : 0;
    synchronize(block);
    A[i] = next;
}
