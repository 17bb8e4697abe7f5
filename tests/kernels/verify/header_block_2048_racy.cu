//--blockDim=2048 --gridDim=1
// @verify a race certain 8 8
// @verify_labels a CI DI
// header_block_2048.cu's racy twin: thread t and thread t + 1024 of the
// block stated in the header write the same element.
__global__ void wide(int* a)
{
    a[threadIdx.x % 1024] = threadIdx.x;
}
