// @verify_launch --grid 4 --block 64 --within-block
// @verify out race certain 8 8
// @verify_labels out CI DI
// within_block.cu's racy twin: threads t and t + 32 of one block write the
// same element, a race --within-block still reports.
__global__ void rows(int* out)
{
    out[threadIdx.x % 32] = threadIdx.x;
}
