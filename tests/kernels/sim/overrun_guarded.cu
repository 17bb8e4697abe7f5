// @kernel scatter(int*, int*)
// @launch --grid 1 --block 128 --arg buf:64 --arg buf:128
// @expect clean
// overrun_into_neighbour.cu with the index checked against the length of `a`: every access is in bounds.
__global__ void scatter(int *a, int *b)
{
    unsigned tid = threadIdx.x;
    b[tid] = tid;
    if (2 * tid < 64)
        a[2 * tid] = 1;
}
