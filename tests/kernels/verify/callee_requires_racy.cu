// @verify_launch --grid 1 --block 64 -G
// @verify a race certain 9 9
// @verify_labels a CI DI
// A device function's __requires is its callers' obligation: verify does
// not assume it (nor prove it), so the kernel breaking it by passing 0 for
// every thread is a race on a[0], not a proof.
#include "cuda.h"

__device__ void put(int* a, unsigned i) { __requires(i == threadIdx.x); a[i] = 1; }

__global__ void k(int* a) { put(a, 0); }
