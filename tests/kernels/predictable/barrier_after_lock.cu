// @kernel barrier_after_lock(int*, int*, int*)
// @shared barrier_after_lock 4
// @atomics barrier_after_lock 15:cas.gpu 23:exch.gpu
// @fences barrier_after_lock 17:gpu 22:gpu
// @barriers barrier_after_lock 35
// @launch --grid 2 --block 64 --arg buf:1 --arg buf:1 --arg buf:2 --detector gwcp
// @expect clean
// Thread 0 of each block takes a device lock, bumps a global counter inside
// it and keeps a copy in shared memory; after __syncthreads the last thread of
// the block reads the copy. The barrier orders the shared write before the read
// for every participant in every schedule (gwcp rule (c)); the counter updates
// are ordered by rule (a). Clean for gwcp and hb.
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

__global__ void barrier_after_lock(int* mutex, int* counter, int* out)
{
    __shared__ int mine;
    if (threadIdx.x == 0) {
        lock(mutex);
        mine = *counter;
        *counter = mine + 1;
        unlock(mutex);
    }
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1) {
        out[blockIdx.x] = mine;
    }
}
