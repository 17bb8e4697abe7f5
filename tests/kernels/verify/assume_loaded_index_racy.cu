// @verify_launch --grid 2 --block 64 --no-confirm
// @verify keys race-free
// @verify out race possible 16 16
// @verify_labels out CI
// @verify_approx out __assume at tests/kernels/verify/assume_loaded_index_racy.cu:15, on approximated values
// assume_loaded_index.cu with slots that overlap: thread i may take slot
// i + 1, which thread i + 1 may take too. The assumption is on a value
// loaded from memory, so the alarm is possible, not certain.
#include "cuda.h"

__global__ void scatter(int* out, const unsigned* keys)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned k = keys[i];
    __assume(k == i || k == i + 1);
    out[k] = i;
}
