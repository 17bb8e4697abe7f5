// @kernel deposit(volatile int*, int*)
// @atomics deposit 13:cas.gpu 21:exch.gpu
// @fences deposit 15:gpu 20:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1
// @expect clean
// @expect_ptx clean
// @expect_scord clean
// ScoR category: lock, inter-block. Thread 0 of each block adds to a volatile
// balance inside a device-scope lock (atomicCAS then __threadfence to take it,
// __threadfence then atomicExch to give it back). Clean under every model.
__device__ void take(int* mutex)
{
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
}

__device__ void give(int* mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

__global__ void deposit(volatile int* balance, int* mutex)
{
    if (threadIdx.x != 0) return;
    take(mutex);
    *balance = *balance + 10 * (blockIdx.x + 1);
    give(mutex);
}
