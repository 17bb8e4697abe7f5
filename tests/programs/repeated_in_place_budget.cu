// What repeated launches keep is forgotten least recently launched first (README "Repeated launches"): with
// a budget (a sixteenth of --max-memory) too small for everything, the big copy launched before the loop
// goes, not the in-place update the loop repeats, so the update still replays from its fourth launch.
// `add_table` reads 3 MiB of `table` (one int per 192 bytes) and updates `data` in place; `copy_big`'s
// kept bytes are about 13 MiB. test_programs.py runs this also with --max-memory 256M (a 16 MiB budget).
// @stdout 8 8
// @exit 0
// @launches 15
// @replayed 8
// @expect clean
#include <cstdio>

__global__ void copy_big(int *dst, const int *src, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ void restore(int *data, const int *src) { data[blockIdx.x * blockDim.x + threadIdx.x] = src[blockIdx.x * blockDim.x + threadIdx.x]; }

__global__ void add_table(int *data, const int *table) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] += table[48 * i];
}

int main() {
    const int big = 3328 * 256, n = 64 * 256;
    int *a, *b, *data, *src, *table, host[2];
    cudaMalloc(&a, big * sizeof(int));
    cudaMalloc(&b, big * sizeof(int));
    cudaMalloc(&data, n * sizeof(int));
    cudaMalloc(&src, n * sizeof(int));
    cudaMalloc(&table, 48 * n * sizeof(int));
    cudaMemset(a, 0, big * sizeof(int));
    cudaMemset(src, 0, n * sizeof(int));
    cudaMemset(table, 0, 48 * n * sizeof(int));
    cudaMemcpy(table, "\x08\0\0\0", 4, cudaMemcpyHostToDevice);
    cudaMemcpy(table + 48 * (n - 1), "\x08\0\0\0", 4, cudaMemcpyHostToDevice);
    for (int r = 0; r < 3; r++)
        copy_big<<<13, 256>>>(b, a, big);
    for (int r = 0; r < 6; r++) {
        restore<<<64, 256>>>(data, src);
        add_table<<<64, 256>>>(data, table);
    }
    cudaMemcpy(&host[0], data, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&host[1], data + n - 1, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d\n", host[0], host[1]);
    return 0;
}
