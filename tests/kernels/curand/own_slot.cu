// @kernel draw(float*, float*, unsigned int*)
// @launch --grid 2 --block 64 --arg buf:128 --arg buf:128 --arg buf:128
// @expect clean
// Each thread draws from its own cuRAND state (XORWOW, fixed seed, one subsequence per thread) and
// writes the draws to its own slots: nothing is shared, so nothing races.
#include <curand_kernel.h>

__global__ void draw(float *uniform, float *normal, unsigned int *bits) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    curandState state;
    curand_init(7, i, 0, &state);
    uniform[i] = curand_uniform(&state);
    normal[i] = curand_normal(&state);
    bits[i] = curand(&state);
}
