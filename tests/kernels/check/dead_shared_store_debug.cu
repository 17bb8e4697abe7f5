// @launch --grid 1 --block 64 -G
// @expect data-race shared 9 9
// Every thread writes a[0] and nothing reads it: optimised, the store is deleted and the launch has no
// race; compiled with -G, as the source says, all 64 threads write a[0] (across warps and within one).
__global__ void last_writer_wins(void)
{
    __shared__ int a[16];

    a[0] = threadIdx.x;
}
