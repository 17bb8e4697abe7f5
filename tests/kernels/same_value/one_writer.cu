// @kernel one_writer(const int*, int*)
// @shared one_writer 4
// @barriers one_writer 13 16
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:2
// @expect clean
// The race-free twin of flag_shared.cu: only thread 0 writes the flag.
__global__ void one_writer(const int* in, int* out)
{
    __shared__ int found;
    if (threadIdx.x == 0) {
        found = 0;
    }
    __syncthreads();
    if (threadIdx.x == 0 && in[blockIdx.x * blockDim.x] >= 0)
        found = 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        out[blockIdx.x] = found;
    }
}
