// @launch --grid 2 --block 64 --search
// @expect data-race global 11 11
// Each thread writes element tid * stride. With the default stride (the
// thread count) every thread has its own element; with stride 0 all of them
// write element 0. The input search has to find that stride: its fitness
// (distinct addresses per thread-address pair, then the footprint) falls as
// the stride shrinks.
__global__ void scatter(int* a, int stride)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    a[tid * stride] = tid;
}
