// @verify_launch --grid 2,2,2 --block 8,4,2
// @verify vol race-free
// Three-dimensional indexing over a 16 x 8 x 4 volume: one element per thread.
__global__ void fill(int* vol)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    vol[(z * 8 + y) * 16 + x] = x + y + z;
}
