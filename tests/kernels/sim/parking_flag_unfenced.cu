// @launch --grid 4 --block 32 --arg buf:32 --arg buf:1 --arg buf:128
// @expect data-race global 23 31
// Like parking_flag_publish.cu, but with relaxed loads and no fence: block
// 0's leader works for 100 rounds, writes a value and sets the flag; the
// leaders of the other blocks, parked on the flag until it is set, then read
// the value. Nothing orders the write before the reads (no release fence
// before the flag store, no acquire after the flag load), so each woken
// leader's read races with the write.
__device__ int load_relaxed(const int* p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__global__ void publish_unfenced(int* data, int* flag, int* copies)
{
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
#pragma unroll 1
            for (int i = 1; i <= 100; ++i)
                atomicAdd(&copies[0], i);
            data[5] = 42;
            atomicExch(flag, 1);
        }
        return;
    }
    if (threadIdx.x == 0) {
        while (load_relaxed(flag) == 0) {
        }
        copies[blockIdx.x * 32] = data[5];
    }
}
