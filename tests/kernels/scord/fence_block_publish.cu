// @kernel publish(volatile int*, int*, int*)
// @atomics publish 19:exch.gpu 21:or.gpu
// @fences publish 18:cta
// @launch --grid 2 --block 32 --arg buf:4 --arg buf:1 --arg buf:1
// @expect data-race global 17 23 warning
// @expect_ptx clean
// @expect_scord data-race global 17 23 error
// ScoR category: fence, inter-block, insufficient scope. As
// fence_device_publish.cu, but the producer's fence is __threadfence_block,
// which orders nothing for a consumer in another block. ScoRD: a device-scope
// race on the volatile value (error). PTX: the volatile accesses are strong
// and never race (clean). CUDA default: volatile is not atomic (warning).
__global__ void publish(volatile int* value, int* ready, int* out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        value[2] = 7;
        __threadfence_block();
        atomicExch(ready, 1);
    } else {
        while (atomicOr(ready, 0) == 0) {
        }
        *out = value[2];
    }
}
