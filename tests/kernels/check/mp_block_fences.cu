// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1
// @expect data-race global 9 15
// Message passing between blocks with block-scoped fences: insufficient scope;
// the consumer spins on the flag with an atomic read, fences, then reads the data.
__global__ void mp(int* data, int* flag, int* result)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *data = 42;
        __threadfence_block();
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {}
        __threadfence_block();
        *result = *data;
    }
}
