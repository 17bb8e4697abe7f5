// @kernel publish(volatile int*, int*, int*)
// @atomics publish 18:exch.gpu 20:or.gpu
// @fences publish 17:cta
// @launch --grid 1 --block 64 --arg buf:4 --arg buf:1 --arg buf:1
// @expect data-race global 16 22 warning
// @expect_ptx clean
// @expect_scord clean
// ScoR category: fence, inter-warp. The producer (warp 0) and the consumer
// (warp 1) share a block, so __threadfence_block before the flag write is
// enough under ScoRD (clean) and the volatile pair is strong under PTX
// (clean). CUDA default: no fence after the flag read and volatile is not
// atomic (warning).
__global__ void publish(volatile int* value, int* ready, int* out)
{
    if (threadIdx.x == 0) {
        value[1] = 3;
        __threadfence_block();
        atomicExch(ready, 1);
    } else if (threadIdx.x == 32) {
        while (atomicOr(ready, 0) == 0) {
        }
        *out = value[1];
    }
}
