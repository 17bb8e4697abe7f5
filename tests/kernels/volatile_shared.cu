// @kernel volatile_flag(const int*, int*)
// @shared volatile_flag 8
// @barriers volatile_flag 14
// @launch --grid 1 --block 64 --arg buf:1:iota --arg buf:1
// A flag in volatile shared memory: thread 0 writes, warp 1 polls it after a barrier.
__global__ void volatile_flag(const int* in, int* out)
{
    __shared__ volatile int ready;
    __shared__ int value;
    if (threadIdx.x == 0) {
        ready = 0;
        value = in[0];
    }
    __syncthreads();
    if (threadIdx.x == 0)
        ready = 1;
    if (threadIdx.x == 32) {
        while (ready == 0) {
        }
        out[0] = value;
    }
}
