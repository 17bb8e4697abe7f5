// @kernel scatter(unsigned int*)
// @barriers scatter 17 22
// @shared scatter 64
// @launch --grid 1 --block 64 --arg buf:16
// @expect data-race shared 21 21
// Each of 64 threads draws a random slot of a 16-entry shared table from cuRAND's default generator
// (XORWOW, fixed seed, one subsequence per thread) and writes its index there. 64 threads and 16 slots:
// by the pigeonhole principle at least two threads pick the same slot, whatever the generator gives,
// and nothing orders their stores.
#include <curand_kernel.h>

#define SLOTS 16

__global__ void scatter(unsigned int *out) {
    __shared__ unsigned int table[SLOTS];
    if (threadIdx.x < SLOTS) table[threadIdx.x] = 0;
    __syncthreads();
    curandState state;
    curand_init(2024, threadIdx.x, 0, &state);
    unsigned int slot = curand(&state) % SLOTS;
    table[slot] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x < SLOTS) out[threadIdx.x] = table[threadIdx.x];
}
