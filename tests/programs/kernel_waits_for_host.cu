// A kernel that spins until the host sets a flag in managed memory after the launch cannot be simulated
// (gpurace runs each launch to its end when it is issued, before the host goes on): the program is stopped
// with a message naming the launch, the spinning line and the memory, never with a false livelock.
// @exit 2
// @launches 1
// @expect_error kernel_waits_for_host.cu:18: the launch of wait_for_host(volatile unsigned int*) cannot be simulated: it spins at kernel_waits_for_host.cu:10 reading cudaMallocManaged#1, memory the host can write
#include <cstdio>

__global__ void wait_for_host(volatile unsigned *flag) {
    while (flag[0] < 1)
        ;
}

int main() {
    unsigned *flag;
    cudaMallocManaged(&flag, sizeof(unsigned));
    *flag = 0;
    wait_for_host<<<1, 1>>>(flag);
    *flag = 1;
    cudaDeviceSynchronize();
    printf("released\n");
    return 0;
}
