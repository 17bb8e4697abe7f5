// @verify a race-free
// GPUVerify's file-scope __axiom: every launch in scope has blocks of 128
// threads, so each thread writes its own element (for any grid). Without the
// axiom a block of more than 128 threads would reach into the next block's
// elements (axiom_block_size_racy.cu).
#include <cuda.h>

__axiom(blockDim.x == 128);

__global__ void fill(int* a)
{
    a[blockIdx.x * 128 + threadIdx.x] = threadIdx.x;
}
