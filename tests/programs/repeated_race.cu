// A two-kernel pipeline run three times with the program's own arguments. The first kernel is clean; in the
// second, every thread of a block stores the block's sum into the same word without a barrier or atomic: a
// data race on every launch (a warning: the threads store the same value), which gpurace reports once, with
// the count, the first launch that showed it and that launch's host line. The printed result is a GPU's.
// @args 3 7
// @stdout round 0: 2016
// @stdout round 1: 4032
// @stdout round 2: 6048
// @stdout scale 7
// @exit 1
// @launches 6
// @expect data-race 24
#include <cstdio>
#include <cstdlib>

__global__ void scale(int *data, int factor) {
    data[threadIdx.x] = threadIdx.x * factor;
}

__global__ void publish(const int *data, int *total) {
    int sum = 0;
    for (int i = 0; i < 64; i++)
        sum += data[i];
    total[0] = sum;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    int factor = argc > 2 ? atoi(argv[2]) : 1;
    int *data, *total;
    cudaMalloc(&data, 64 * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    for (int r = 0; r < rounds; r++) {
        scale<<<1, 64>>>(data, r + 1);
        publish<<<1, 64>>>(data, total);
        int host = 0;
        cudaMemcpy(&host, total, sizeof(int), cudaMemcpyDeviceToHost);
        printf("round %d: %d\n", r, host);
    }
    printf("scale %d\n", factor);
    cudaFree(data);
    cudaFree(total);
    return 0;
}
