// @launch --grid 2 --block 32 --arg buf:1 --arg buf:64
// @expect livelock 12
// Block 1 works for 200 rounds and exits without setting the flag block 0
// waits for. Block 0 parks on the flag while block 1 works (the rounds change
// memory, so they are no livelock); once block 1 has exited nothing can wake
// it, which is a livelock at the spin.
__global__ void wait_after_work(int* flag, int* out)
{
    volatile int* f = flag;
    volatile int* o = out;
    if (blockIdx.x == 0) {
        while (*f == 0) {
        }
        o[threadIdx.x] = 1;
        return;
    }
#pragma unroll 1
    for (int i = 0; i < 200; ++i)
        o[32 + threadIdx.x] = o[32 + threadIdx.x] + i;
}
