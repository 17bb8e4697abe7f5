// @kernel barrier_missing(int*, int*, int*)
// @shared barrier_missing 4
// @atomics barrier_missing 12:cas.gpu 20:exch.gpu
// @fences barrier_missing 14:gpu 19:gpu
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --arg buf:2 --detector gwcp
// @expect data-race shared 28 33
// @expect uninitialized-read shared 33
// barrier_after_lock.cu without its __syncthreads: the last thread reads the shared copy unordered with thread
// 0's write (it never takes the lock; found by gwcp and hb), and reads it unwritten when it runs first.
__device__ void lock(int* mutex)
{
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
}

__device__ void unlock(int* mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

__global__ void barrier_missing(int* mutex, int* counter, int* out)
{
    __shared__ int mine;
    if (threadIdx.x == 0) {
        lock(mutex);
        mine = *counter;
        *counter = mine + 1;
        unlock(mutex);
    }
    if (threadIdx.x == blockDim.x - 1) {
        out[blockIdx.x] = mine;
    }
}
