// @kernel sequence(unsigned int*, unsigned int*, float*, unsigned int)
// @launch --grid 1 --block 32 --arg buf:128 --arg buf:32 --arg buf:32 --arg 3
// @expect clean
// cuRAND's XORWOW generator as its header computes it: thread i seeds a state with seed i (subsequence 0)
// and writes its first four numbers to first[4i..4i+3]; a second state with the same seed, started
// `skip` numbers ahead (curand_init's offset, which jumps with the header's precomputed matrices), writes
// its first number to skipped[i]; a third gives curand_uniform's first value. Each thread writes its own
// slots, so nothing races; tests/test_device_libraries.py checks the values.
#include <curand_kernel.h>

__global__ void sequence(unsigned int *first, unsigned int *skipped, float *uniform, unsigned int skip) {
    unsigned int i = threadIdx.x;
    curandState state;
    curand_init(i, 0, 0, &state);
    for (int k = 0; k < 4; ++k)
        first[4 * i + k] = curand(&state);
    curandState ahead;
    curand_init(i, 0, skip, &ahead);
    skipped[i] = curand(&ahead);
    curandState u;
    curand_init(i, 0, 0, &u);
    uniform[i] = curand_uniform(&u);
}
