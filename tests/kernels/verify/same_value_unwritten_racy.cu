// @verify_launch --benign-same-value --no-confirm -G
// @verify table race-free
// @verify log race-free
// @verify tile race-free
// @verify out race possible 17 17
// @verify across race possible 18 18
// @verify changed race possible 19 19
// same_value_unwritten.cu where the stores need not agree: two elements of
// the table, each block's own shared array, and an element of memory the
// kernel writes (elsewhere: `log` itself is race-free) before or after
// another thread reads it.
__global__ void copy_first_racy(const int* table, int* log, int* out, int* across, int* changed)
{
    __shared__ int tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    log[i + 1] = i;
    *out = table[threadIdx.x % 2];
    *across = tile[5];
    *changed = log[0];
}
