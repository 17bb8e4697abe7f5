// @launch --grid 2 --block 64
// @expect data-race global 10 10
// `n` is automatic: it defaults to the number of threads (128), so every
// thread passes the guard and threads i and i + 32 write the same element.
// With n <= 32 the kernel would be race-free.
__global__ void fold(int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i % 32] = i;
}
