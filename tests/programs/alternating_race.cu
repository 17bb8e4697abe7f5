// Two kernels launched in turn for four rounds, for the launch filters (tests/runtime/test_launch_filters.py).
// `fill` is clean. `publish` stores the sum of `data` into one word: in even rounds only thread 0 stores
// it, in odd rounds every thread of the block does, without a barrier or atomic: a data race in launches
// 4 and 8 (fill is launch 1, 3, 5, 7; publish 2, 4, 6, 8), reported once with its count and launch 4.
// All threads store the same value, so the printed results are what a GPU prints.
// @stdout round 0: 2016
// @stdout round 1: 4032
// @stdout round 2: 6048
// @stdout round 3: 8064
// @exit 1
// @launches 8
// @expect data-race 25
#include <cstdio>

__global__ void fill(int *data, int factor) {
    data[threadIdx.x] = threadIdx.x * factor;
}

__global__ void publish(const int *data, int *total, int everyone) {
    int sum = 0;
    for (int i = 0; i < 64; i++)
        sum += data[i];
    if (!everyone && threadIdx.x != 0)
        return;
    total[0] = sum;
}

int main() {
    int *data, *total;
    cudaMalloc(&data, 64 * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    for (int r = 0; r < 4; r++) {
        fill<<<1, 64>>>(data, r + 1);
        publish<<<1, 64>>>(data, total, r % 2);
        int host = 0;
        cudaMemcpy(&host, total, sizeof(int), cudaMemcpyDeviceToHost);
        printf("round %d: %d\n", r, host);
    }
    cudaFree(data);
    cudaFree(total);
    return 0;
}
