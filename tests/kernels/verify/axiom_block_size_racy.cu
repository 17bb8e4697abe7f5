// @verify a race certain 12 12
// @verify_labels a CI DI
// axiom_block_size.cu with an axiom too weak for the indexing: blocks of up
// to 256 threads, so thread 128 of block 0 and thread 0 of block 1 write the
// same element.
#include <cuda.h>

__axiom(blockDim.x <= 256);

__global__ void fill(int* a)
{
    a[blockIdx.x * 128 + threadIdx.x] = threadIdx.x;
}
