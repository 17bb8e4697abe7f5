// @launch --grid 2 --block 64 --arg buf:64 --arg buf:1 --arg buf:64
// @expect data-race global 17 20 warning
// Inter-block message passing: block 0 fills a buffer, then one thread fences and raises
// a volatile flag; block 1 spins on the flag, fences, then copies the buffer. It finishes
// with the right data; the flag itself is a volatile-vs-volatile conflict (not atomic).
__global__ void flag_wait(int* data, int* flag, int* copy)
{
    volatile int* vflag = flag;
    if (blockIdx.x == 0) {
        int acc = 0;
        for (int i = 0; i <= threadIdx.x; ++i)
            acc += i;
        data[threadIdx.x] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            *vflag = 1;
        }
    } else {
        while (*vflag == 0) {
        }
        __threadfence();
        copy[threadIdx.x] = ((volatile int*)data)[threadIdx.x];
    }
}
