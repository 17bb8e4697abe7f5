// --gridDim=[2,2]
// @verify_launch --within-block
// @verify out race certain 12 12
// @verify_labels out CI DI
// header_grid_only.cu's racy twin: the kernel reads blockIdx.y, so the
// block stays open along y (a launch may make it two threads deep), and
// threads (x, 0) and (x, 1) of one block write the same element.
__global__ void shift(int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y;
    out[i + gridDim.y] = row;
}
