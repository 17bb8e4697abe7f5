// @verify_launch --grid 2 --block 64
// @verify keys race-free
// @verify out race-free
// A thread's slot is loaded from memory, so without help verify cannot tell
// the slots apart. GPUVerify's __assume states what the loaded key is: one
// of the thread's own two slots. verify assumes it where it stands (each
// thread, at that point), and proves the scatter race-free.
#include "cuda.h"

__global__ void scatter(int* out, const unsigned* keys)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned k = keys[i];
    __assume(k == 2 * i || k == 2 * i + 1);
    out[k] = i;
}
