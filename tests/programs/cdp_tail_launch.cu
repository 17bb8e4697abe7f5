// CUDA Dynamic Parallelism: a tail launch and the same launch into the NULL stream, each reading what the whole
// parent grid wrote, with no barrier. Four blocks each write their elements of `data`; thread 0 of block 0
// launches `sum` twice: into cudaStreamTailLaunch (out[0]), which runs only when the parent grid (every block
// of it) has ended, so it is ordered after every write: clean; and into its block's NULL stream (out[1]), which
// sees only what the launching thread did before the launch: every other thread's write (line 23) races with
// its reads (line 17), block 0's too, as no barrier comes between. Both sums are 0 + 1 + ... + 127 here.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout tail: 8128 null stream: 8128
// @exit 1
// @launches 3
// @expect data-race 17 23
#include <cstdio>

__global__ void sum(const int *data, int n, int *out) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += data[i];
    *out = s;
}

__global__ void fill(int *data, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = i;
    if (i == 0) {
        sum<<<1, 1, 0, cudaStreamTailLaunch>>>(data, gridDim.x * blockDim.x, &out[0]);
        sum<<<1, 1>>>(data, gridDim.x * blockDim.x, &out[1]);
    }
}

int main() {
    int *data, *out;
    cudaMalloc(&data, 128 * sizeof(int));
    cudaMalloc(&out, 2 * sizeof(int));
    fill<<<4, 32>>>(data, out);
    int result[2] = {0, 0};
    cudaMemcpy(result, out, sizeof result, cudaMemcpyDeviceToHost);
    printf("tail: %d null stream: %d\n", result[0], result[1]);
    return 0;
}
