// @launch --grid 2 --block 64 --search
// @expect clean
// The race-free twin of stride_zero.cu: the stride is clamped to at least 1,
// so no input makes two threads write the same element.
__global__ void scatter(int* a, int stride)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (stride < 1)
        stride = 1;
    a[tid * stride] = tid;
}
