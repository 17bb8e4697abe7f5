// @launch --grid 1 --block 64 --arg 16
// @expect out-of-bounds global 11
// @expect data-race global 12 12
// An index past the end of the __device__ array `first` reaches as far as the variable declared after it
// (thread 8 writes first[128], 512 bytes in: where `second` would be, packed one red zone after `first`),
// while every thread also writes second[0]. The overrun is an out-of-bounds finding at its line, never an
// access to `second`; the race on second[0] is reported on its own line.
__device__ int first[64];
__device__ int second[64];
__global__ void spill(int stride) {
    first[threadIdx.x * stride] = threadIdx.x;
    second[0] = threadIdx.x;
}
