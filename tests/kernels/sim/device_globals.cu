// @launch --grid 2 --block 32 --arg buf:128
// @expect clean
// __device__ variables with initializers: a table and a weight read by every thread,
// and a counter that hands out tickets atomically starting from its initial value.
__device__ int table[4] = {10, 20, 30, 40};
__device__ unsigned counter = 100;
__device__ double weight = 1.5;

__global__ void use_globals(int* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[2 * g] = (int)(table[g % 4] * weight);
    out[2 * g + 1] = atomicAdd(&counter, 1u);
}
