// @kernel flag_global_fenced_ids(int*, int*)
// @fences flag_global_fenced_ids 13:gpu
// @launch --grid 4 --block 64 --arg buf:256 --arg buf:1
// @expect data-race global 14 14 error
// @expect_ptx data-race global 14 14 error
// @expect_scord data-race global 14 14 error
// @expect_cause no synchronisation between the two accesses
// The twin of flag_global_fenced.cu: each thread marks the result with its
// own index, so the stores differ and the races are ordinary errors.
__global__ void flag_global_fenced_ids(int* data, int* ready)
{
    data[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
    __threadfence();
    *ready = threadIdx.x;
}
