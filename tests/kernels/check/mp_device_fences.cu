// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1
// @expect clean
// Message passing between blocks done right: data, device fence, atomic flag;
// the consumer spins on the flag with an atomic read, fences, then reads the data.
__global__ void mp(int* data, int* flag, int* result)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *data = 42;
        __threadfence();
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {}
        __threadfence();
        *result = *data;
    }
}
