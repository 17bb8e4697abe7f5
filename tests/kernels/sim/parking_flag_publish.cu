// @launch --grid 16 --block 32 --arg buf:32 --arg buf:1 --arg buf:480
// @expect clean
// Block 0 accumulates 32 values over 100 rounds, then publishes them (barrier,
// fence, flag). The leaders of the other 15 blocks spin on the flag with
// acquire loads, which parks them; the flag store wakes them, and after a
// barrier their blocks copy the values.
__device__ int load_acquire(const int* p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__global__ void publish(int* data, int* flag, int* copies)
{
    if (blockIdx.x == 0) {
        volatile int* d = data;
#pragma unroll 1
        for (int i = 1; i <= 100; ++i)
            d[threadIdx.x] = d[threadIdx.x] + i * threadIdx.x;
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            atomicExch(flag, 1);
        }
        return;
    }
    if (threadIdx.x == 0) {
        while (load_acquire(flag) == 0) {
        }
    }
    __syncthreads();
    copies[(blockIdx.x - 1) * 32 + threadIdx.x] = data[threadIdx.x];
}
