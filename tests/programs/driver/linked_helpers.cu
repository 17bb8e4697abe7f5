// What linked_kernels.cu calls and reads, linked with it at run time: add_plain adds without an atomic (the
// global-memory race of sum_plain, line 6), add_atomic with one.

__device__ int offset = 1;

__device__ void add_plain(int *total, int value) { *total += value; }

__device__ void add_atomic(int *total, int value) { atomicAdd(total, value); }
