// @kernel publish(volatile int*, int*, int*)
// @atomics publish 21:exch.gpu 23:or.gpu
// @fences publish 20:gpu
// @launch --grid 2 --block 32 --arg buf:4 --arg buf:1 --arg buf:1
// @expect data-race global 19 25 warning
// @expect_ptx clean
// @expect_scord clean
// ScoR category: fence, inter-block. Block 0 stores a volatile value, fences
// with device scope and raises a flag; block 1 waits for the flag and loads
// the value with no fence after the flag read. ScoRD: the device fence
// before the flag write orders the volatile store (clean). PTX: volatile is
// .relaxed.sys, so the two volatile accesses never race (clean). CUDA
// default: the consumer's strong read acquires only with a fence after it,
// and volatile is not atomic (warning).
__global__ void publish(volatile int* value, int* ready, int* out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        value[2] = 7;
        __threadfence();
        atomicExch(ready, 1);
    } else {
        while (atomicOr(ready, 0) == 0) {
        }
        *out = value[2];
    }
}
