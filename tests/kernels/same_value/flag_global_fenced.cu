// @kernel flag_global_fenced(int*, int*)
// @fences flag_global_fenced 14:gpu
// @launch --grid 4 --block 64 --arg buf:256 --arg buf:1
// @expect data-race global 15 15 warning
// @expect_ptx data-race global 15 15 warning
// @expect_scord data-race global 15 15 warning
// @expect_cause both threads wrote the same value
// Every thread of every block publishes its element and then marks the
// result as ready with the same plain store: same-value races within and
// across blocks (the fence makes the default check use gwcp, not interval).
__global__ void flag_global_fenced(int* data, int* ready)
{
    data[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
    __threadfence();
    *ready = 1;
}
