// --gridDim=[2,2]
// @verify_launch --within-block
// @verify out race certain 12 12
// @verify_labels out CI DI
// header_grid_only.cu's racy twin: the kernel reads threadIdx.y, so the
// block stays open along y, and threads (x, 0) and (x, 1) of one block
// write the same element.
__global__ void shift(int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int row = threadIdx.y;
    out[i + gridDim.y] = row;
}
