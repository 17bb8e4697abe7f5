// @launch --grid 1 --block 32 --arg buf:1 --arg buf:32
// @expect livelock 7
// Every thread waits for a flag that no thread ever sets.
__global__ void wait_forever(int* flag, int* out)
{
    volatile int* f = flag;
    while (*f == 0) {
    }
    out[threadIdx.x] = 1;
}
