//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=[2,2] --no-inline
//kernel.cu:11:12: read by thread
// @expect data-race global 11 11
// Each thread copies its right neighbour's element, which that neighbour overwrites.
#include <cuda.h>

__global__ void shift_left(int *A)
{
    unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    A[i] = A[i + 1];
}
