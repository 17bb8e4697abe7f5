// @kernel two_flags(int*, int*)
// @launch --grid 3 --block 32 --arg buf:2 --arg buf:2
// @expect data-race global 20 29
// @expect_ptx data-race global 20 29 error
// @expect_scord data-race global 20 29 error
// Block 0 publishes `data` behind flags[0] (its device fence, then the flag); block 2 sets flags[1] after a
// fence that orders nothing. Block 1's lane 0 waits for flags[0], then for flags[1], and reads `data` with no
// fence after either read (ScoRD: flags never order plain data): the race names the flag read whose release
// carried the write (line 25), not the later read of flags[1] (line 27) (checked in test_consumer_fence.py).
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
