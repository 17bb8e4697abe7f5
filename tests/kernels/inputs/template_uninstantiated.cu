// @launch --kernel 'shift<int, 1>' --grid 2 --block 64 --arg buf:129
// @expect data-race global 11 14
// A file of template kernels that instantiates none of them (as kernel-only suites ship them):
// --kernel names the instantiation to check, and gpurace instantiates it. With a stride of 1,
// thread i reads element i + 1 (line 11) while thread i + 1 writes it (line 14). The race-free one is
// template_uninstantiated_clean.cu's launch of the same template.
template <typename T, int STRIDE>
__global__ void shift(T *a)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    T next = a[i + STRIDE];
    if (STRIDE == 0)
        return;
    a[i] = next;
}
