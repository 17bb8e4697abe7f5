// @kernel hand_over(volatile int*, int*, int*)
// @atomics hand_over 20:exch.gpu 23:or.gpu
// @fences hand_over 19:gpu
// @launch --grid 2 --block 32 --arg buf:2 --arg buf:1 --arg buf:1
// @expect data-race global 18 25 warning
// @expect data-race global 21 25 warning
// @expect_ptx clean
// @expect_scord data-race global 21 25 error
// ScoR category: fence, inter-block. Block 0 reads the value, fences and
// hands it over with a flag, then reads it once more; block 1 waits for the
// flag and overwrites it. The first read is ordered, the second is not. ScoRD:
// race between the second read and the write (error). PTX: both volatile,
// strong, no race (clean). CUDA default: volatile is not atomic (warning).
__global__ void hand_over(volatile int* value, int* ready, int* out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        int before = value[1];
        __threadfence();
        atomicExch(ready, 1);
        out[0] = before + value[1];
    } else {
        while (atomicOr(ready, 0) == 0) {
        }
        value[1] = 9;
    }
}
