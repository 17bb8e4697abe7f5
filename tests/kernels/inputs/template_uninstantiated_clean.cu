// @launch --kernel 'shift<float,0>' --grid 2 --block 64 --arg buf:128
// @expect clean
// The race-free twin of template_uninstantiated.cu: the same uninstantiated template, checked as
// `shift<float, 0>` (typed without the space), which only reads.
template <typename T, int STRIDE>
__global__ void shift(T *a)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    T next = a[i + STRIDE];
    if (STRIDE == 0)
        return;
    a[i] = next;
}
