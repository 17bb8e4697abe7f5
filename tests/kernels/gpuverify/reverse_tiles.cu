//pass
//--blockDim=64 --gridDim=4 --equality-abstraction -DTILE=64
// @expect clean
// Each block reverses its tile through shared memory; loop invariants sit in the loop condition.
#include "cuda.h"

__global__ void reverse_tiles(int *data)
{
    __shared__ int tile[TILE];
    unsigned t = threadIdx.x;
    unsigned base = blockIdx.x * TILE;
    tile[t] = data[base + t];
    __syncthreads();
    int acc = 0;
    for (int k = 0;
         __invariant(k >= 0), __invariant(__no_read(data)), __global_invariant(__implies(__same_group, k <= 4)),
         k < 4;
         k++) {
        acc += tile[(t + k) % TILE];
    }
    __barrier_invariant(tile[t] == data[base + t], t);
    __syncthreads();
    data[base + t] = tile[TILE - 1 - t] + acc;
}
