// @kernel deposit(volatile int*, int*)
// @atomics deposit 15:cas.gpu 20:exch.gpu
// @fences deposit 17:gpu 19:gpu
// @launch --grid 1 --block 64 --arg buf:1 --arg buf:1
// @expect data-race global 18 22 warning
// @expect_ptx clean
// @expect_scord data-race global 18 22 error
// ScoR category: lock, inter-warp, access outside the critical section:
// warp 0 updates the balance under a device-scope lock, warp 1 overwrites it
// without taking the lock. ScoRD: race (error). PTX: the volatile accesses
// are strong (clean). CUDA default: volatile is not atomic (warning).
__global__ void deposit(volatile int* balance, int* mutex)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(mutex, 0, 1) != 0) {
        }
        __threadfence();
        *balance = *balance + 1;
        __threadfence();
        atomicExch(mutex, 0);
    } else if (threadIdx.x == 32) {
        *balance = 0;
    }
}
