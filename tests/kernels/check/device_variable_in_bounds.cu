// @launch --grid 1 --block 64 --arg 1
// @expect clean
// Each thread writes its own element of the __device__ array `first` and reads the same element of
// `second`: no index leaves its array, and no two threads touch one element.
__device__ int first[64];
__device__ int second[64];
__global__ void spill(int stride) {
    first[threadIdx.x * stride] = second[threadIdx.x] + 1;
}
