// @kernel publish(int*, int*, int*)
// @atomics publish 19:exch.gpu 21:or.gpu
// @fences publish 18:gpu 23:gpu
// @launch --grid 2 --block 32 --arg buf:4 --arg buf:1 --arg buf:1
// @expect clean
// @expect_ptx clean
// @expect_scord data-race global 17 24 error
// ScoRD's "not strong access" rule: the value is a plain int. The producer
// fences before the flag and the consumer fences after reading it, which
// orders plain accesses under PTX and CUDA (clean). ScoRD's fences order only
// strong (volatile or atomic) accesses, so under --model scord the plain store
// and load race (error).
__global__ void publish(int* value, int* ready, int* out)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        value[0] = 5;
        __threadfence();
        atomicExch(ready, 1);
    } else {
        while (atomicOr(ready, 0) == 0) {
        }
        __threadfence();
        *out = value[0];
    }
}
