// @kernel message(int*, volatile int*, int*)
// @atomics message 13:exch.gpu
// @fences message 12:gpu 17:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1
// Block 0 publishes data and then a flag; block 1 waits for the flag and reads the data.
__global__ void message(int* data, volatile int* flag, int* result)
{
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        atomicExch((int*)flag, 1);
    } else if (blockIdx.x == 1) {
        while (*flag == 0) {
        }
        __threadfence();
        result[0] = data[0];
    }
}
