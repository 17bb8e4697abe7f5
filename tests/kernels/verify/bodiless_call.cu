// @verify_launch --grid 2 --block 64
// @verify a race-free
// A function declared without a body (defined in another file) is read as
// GPUVerify reads it: it returns any value, and, given no pointer, touches no
// memory of the kernel's and passes no barrier (the report states that
// assumption). Each thread stores whatever it returns to its own element.
__device__ int pick(int seed);

__global__ void fill(int* a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = pick(i);
}
