// A kernel that updates its data in place, repeated on the same data (as a scan's uniform update is on each
// pass over the same input): each round restores the data from `src`, then adds one to every element in
// place. The restoring launches replay from the third round on (they read and write different bytes); the
// in-place launches from the fourth (the second records which bytes they read, the third what those bytes
// held before it ran). Every `add_one` also stores 7 into one word from every thread: a same-value race,
// one finding whose count is seven launches' (test_programs.py).
// @stdout round 6: 1 256
// @stdout changed: 101
// @exit 1
// @launches 13
// @replayed 7
// @expect data-race 20 20
#include <cstdio>

__global__ void restore(int *data, const int *src) { data[blockIdx.x * blockDim.x + threadIdx.x] = src[blockIdx.x * blockDim.x + threadIdx.x]; }

__global__ void add_one(int *data, int *flag) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] += 1;
    *flag = 7;
}

int main() {
    const int n = 256;
    int host[n], *data, *src, *flag;
    for (int i = 0; i < n; i++)
        host[i] = i;
    cudaMalloc(&data, sizeof host);
    cudaMalloc(&src, sizeof host);
    cudaMalloc(&flag, sizeof(int));
    cudaMemcpy(src, host, sizeof host, cudaMemcpyHostToDevice);
    for (int r = 0; r < 6; r++) {
        restore<<<2, 128>>>(data, src);
        add_one<<<2, 128>>>(data, flag);
    }
    cudaMemcpy(host, data, sizeof host, cudaMemcpyDeviceToHost);
    printf("round 6: %d %d\n", host[0], host[255]);
    host[0] = 100;
    cudaMemcpy(data, host, sizeof(int), cudaMemcpyHostToDevice);
    add_one<<<2, 128>>>(data, flag);
    cudaMemcpy(host, data, sizeof(int), cudaMemcpyDeviceToHost);
    printf("changed: %d\n", host[0]);
    cudaFree(data);
    cudaFree(src);
    cudaFree(flag);
    return 0;
}
