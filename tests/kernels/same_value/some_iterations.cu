// @kernel some_iterations(const int*, int*)
// @shared some_iterations 4
// @barriers some_iterations 16 18
// @launch --grid 1 --block 64 --arg buf:4:iota --arg buf:256
// @expect data-race shared 15 15 error
// @expect_cause no synchronisation between the two accesses
// In the first two iterations every thread stores the same value, in the
// last two each its own: one source line, so one finding, and an error since
// not every instance wrote the same value.
__global__ void some_iterations(const int* in, int* out)
{
    __shared__ int word;
    for (int i = 0; i < 4; ++i) {
        int v = i < 2 ? in[i] : in[i] + threadIdx.x;
        word = v;
        __syncthreads();
        out[i * blockDim.x + threadIdx.x] = word;
        __syncthreads();
    }
}
