// @verify_launch --grid 2 --block 64
// @verify a race possible 11 11
// @verify_approx a result of `pick(int)` (declared without a body)
// bodiless_call.cu's racy twin: the free result is the index, so two threads
// may store to the same element.
__device__ int pick(int seed);

__global__ void fill(int* a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[pick(i) & 127] = i;
}
