// @kernel scatter(int*, int*)
// @launch --grid 1 --block 128 --arg buf:64 --arg buf:128
// @expect out-of-bounds global 12
// Every thread writes a[2 * tid], so threads 32..127 write past the end of `a` (64 ints), as far as
// 512 bytes beyond it, where `b` would begin if buffers were packed one red zone apart. Those writes are
// out of bounds, and none is taken for a write to `b`: no race with the threads that write b[tid].
// Twin: overrun_guarded.cu.
__global__ void scatter(int *a, int *b)
{
    unsigned tid = threadIdx.x;
    b[tid] = tid;
    a[2 * tid] = 1;
}
