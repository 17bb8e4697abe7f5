// Thousands of allocations: 3,000 small cudaMallocs kept live, more than the device-only window holds
// at once (the last ones are placed where their bytes are, README "Memory layout under exec"), then
// 5,000 more allocated and freed one after the other, which reuse the addresses freed ones held. A
// kernel fills the first live allocation, the last one and the loop's last, and the program checks
// all three: every allocation succeeds and nothing is reported.
// @stdout 3000 live, 5000 allocated and freed: correct
// @exit 0
// @launches 3
// @expect clean
#include <cstdio>

__global__ void fill(int *x, int v) { x[threadIdx.x] = v + threadIdx.x; }

bool holds(const int *d, int v) {
    int h[32];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 32; i++)
        if (h[i] != v + i) return false;
    return true;
}

int main() {
    const int live_count = 3000, loop_count = 5000;
    static int *live[live_count];
    for (int i = 0; i < live_count; i++)
        if (cudaMalloc(&live[i], 32 * sizeof(int)) != cudaSuccess) {
            printf("cudaMalloc %d failed\n", i);
            return 1;
        }
    fill<<<1, 32>>>(live[0], 0);
    fill<<<1, 32>>>(live[live_count - 1], 100);
    bool ok = holds(live[0], 0) && holds(live[live_count - 1], 100);
    for (int i = 0; i < loop_count; i++) {
        int *p;
        if (cudaMalloc(&p, (1 + i % 7) * 32 * sizeof(int)) != cudaSuccess) {
            printf("cudaMalloc %d of the loop failed\n", i);
            return 1;
        }
        if (i == loop_count - 1) {
            fill<<<1, 32>>>(p, 200);
            ok = ok && holds(p, 200);
        }
        cudaFree(p);
    }
    for (int i = 0; i < live_count; i++) cudaFree(live[i]);
    printf("%d live, %d allocated and freed: %s\n", live_count, loop_count, ok ? "correct" : "WRONG");
    return 0;
}
