//xfail:NOT_ALL_VERIFIED
//--blockDim=32 --gridDim=1
// @verify A race-free
// @verify_barriers divergence possible
// @verify_divergence certain
// Written for GPUVerify, whose cuda.h declared cooperative groups: only the even threads of the block
// reach the block's sync (GPUVerify's synchronize(group)), which every thread of the block must reach.
// Compiled without optimisation, as files for GPUVerify are, the barrier instruction lies in a builtin
// function without a source line; tests/test_device_libraries.py checks what `check` says.
#include <cuda.h>

using namespace cooperative_groups;

__global__ void halves(int *A)
{
    thread_block block = this_thread_block();
    unsigned i = block.thread_rank();
    if (i % 2 == 0) {
        synchronize(block);
    }
    A[i] = i;
}
