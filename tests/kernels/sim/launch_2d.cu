// @launch --grid 3,2 --block 8,4 --arg buf:1536
// @expect clean
// Every thread of a 2D launch records its threadIdx, blockIdx, blockDim and gridDim (x and y, z must be 0/1).
__global__ void ids2d(int* out)
{
    int bx = blockIdx.x + gridDim.x * blockIdx.y;
    int t = threadIdx.x + blockDim.x * threadIdx.y;
    int g = bx * (blockDim.x * blockDim.y) + t;
    int* o = out + 8 * g;
    o[0] = threadIdx.x;
    o[1] = threadIdx.y;
    o[2] = blockIdx.x;
    o[3] = blockIdx.y;
    o[4] = blockDim.x * 100 + blockDim.y;
    o[5] = gridDim.x * 100 + gridDim.y;
    o[6] = threadIdx.z + blockIdx.z;
    o[7] = blockDim.z * gridDim.z;
}
