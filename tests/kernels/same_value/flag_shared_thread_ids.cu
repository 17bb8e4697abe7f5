// @kernel flag_shared_thread_ids(const int*, int*)
// @shared flag_shared_thread_ids 4
// @barriers flag_shared_thread_ids 15 18
// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:2
// @expect data-race shared 17 17 error
// @expect_cause no synchronisation between the two accesses
// The twin of flag_shared.cu: every thread stores its own index, so the
// stores differ and the race is an ordinary error.
__global__ void flag_shared_thread_ids(const int* in, int* out)
{
    __shared__ int found;
    if (threadIdx.x == 0) {
        found = -1;
    }
    __syncthreads();
    if (in[blockIdx.x * blockDim.x + threadIdx.x] > 0)
        found = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) {
        out[blockIdx.x] = found;
    }
}
