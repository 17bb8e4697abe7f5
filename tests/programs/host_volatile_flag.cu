// A kernel polls a volatile flag in page-locked memory that the host sets after the launch, before it waits:
// volatile is not atomic, so the flag races (a warning, as volatile races in kernels are); the kernel gives
// up after a few polls, so it ends whatever it sees.
// @stdout polls: 16
// @exit 1
// @launches 1
// @expect data-race 13 23
#include <cstdio>

__global__ void poll(volatile int *flag, int *polls) {
    int n = 0;
    for (int i = 0; i < 16; i++)
        n += *flag == 0;
    *polls = n;
}

int main() {
    int *flag, *polls;
    cudaMallocHost(&flag, 2 * sizeof(int));
    polls = flag + 1;
    *flag = 0;
    poll<<<1, 1>>>(flag, polls);
    *flag = 1;
    cudaDeviceSynchronize();
    printf("polls: %d\n", *polls);
    cudaFreeHost(flag);
    return 0;
}
