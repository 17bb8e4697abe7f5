// @launch --grid 2,3,2 --block 4,2,3 --arg buf:2016
// @expect clean
// Every thread of a 3D launch writes a linear id computed from all index components.
__global__ void ids3d(int* out)
{
    int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int g = block * blockDim.x * blockDim.y * blockDim.z + t;
    out[g * 7 + 0] = threadIdx.x;
    out[g * 7 + 1] = threadIdx.y;
    out[g * 7 + 2] = threadIdx.z;
    out[g * 7 + 3] = blockIdx.x;
    out[g * 7 + 4] = blockIdx.y;
    out[g * 7 + 5] = blockIdx.z;
    out[g * 7 + 6] = (blockDim.x * 100 + blockDim.y * 10 + blockDim.z) * 1000 + gridDim.x * 100 + gridDim.y * 10 + gridDim.z;
}
