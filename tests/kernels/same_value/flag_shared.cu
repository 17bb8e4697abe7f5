// @kernel flag_shared(const int*, int*)
// @shared flag_shared 4
// @barriers flag_shared 18 21
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:2
// @expect data-race shared 20 20 warning
// @expect_ptx data-race shared 20 20 warning
// @expect_scord data-race shared 20 20 warning
// @expect_cause both threads wrote the same value
// Every thread that sees a positive element raises the same shared flag: a
// write-write race under the PTX memory model, benign under GPUVerify's
// convention since all of them store 1. (Thread 0 of block 0 sees 0.)
__global__ void flag_shared(const int* in, int* out)
{
    __shared__ int found;
    if (threadIdx.x == 0) {
        found = 0;
    }
    __syncthreads();
    if (in[blockIdx.x * blockDim.x + threadIdx.x] > 0)
        found = 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        out[blockIdx.x] = found;
    }
}
