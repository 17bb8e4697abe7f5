// @kernel two_flags(int*, int*)
// @launch --grid 3 --block 32 --arg buf:2 --arg buf:2
// @expect data-race global 18 27
// Block 0 publishes `data` behind flags[0] (its device fence, then the flag); block 2 sets flags[1] after a
// fence that orders nothing of interest. Block 1's lane 0 waits for flags[0], then for flags[1], and reads
// `data` without a fence after either read: the race names the flag read whose release carried the write
// (line 23), not the later read of flags[1] (line 25) (tests/detect/test_consumer_fence.py checks the cause).
__global__ void two_flags(int* data, int* flags)
{
    if (threadIdx.x != 0)
        return;
    if (blockIdx.x == 2) {
        __threadfence();
        atomicExch(&flags[1], 1);
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        atomicExch(&flags[0], 1);
        return;
    }
    while (atomicAdd(&flags[0], 0) == 0) {
    }
    while (atomicAdd(&flags[1], 0) == 0) {
    }
    data[1] = data[0];
}
