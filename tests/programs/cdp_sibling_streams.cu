// CUDA Dynamic Parallelism: which sibling grids race. Thread 0 of `parent` launches `mark` twice on `a` into
// its block's NULL stream (the second runs after the first: clean), twice on `b` fire-and-forget (unordered:
// a data race of `mark_b`'s store with itself, line 17), and twice on `c`, once into each of two streams it
// created with cudaStreamNonBlocking (concurrent: a data race of `mark_c`'s store with itself, line 20).
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout a: 2 b: 2 c: 2
// @exit 1
// @launches 7
// @expect data-race 17 17
// @expect data-race 20 20
#include <cstdio>

__global__ void mark_a(int *a, int v) {
    a[threadIdx.x] = v;
}
__global__ void mark_b(int *b, int v) {
    b[threadIdx.x] = v;
}
__global__ void mark_c(int *c, int v) {
    c[threadIdx.x] = v;
}

__global__ void parent(int *a, int *b, int *c) {
    if (threadIdx.x != 0)
        return;
    mark_a<<<1, 32>>>(a, 1);
    mark_a<<<1, 32>>>(a, 2);
    mark_b<<<1, 32, 0, cudaStreamFireAndForget>>>(b, 1);
    mark_b<<<1, 32, 0, cudaStreamFireAndForget>>>(b, 2);
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    mark_c<<<1, 32, 0, s1>>>(c, 1);
    mark_c<<<1, 32, 0, s2>>>(c, 2);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
}

int main() {
    int *a, *b, *c;
    cudaMalloc(&a, 32 * sizeof(int));
    cudaMalloc(&b, 32 * sizeof(int));
    cudaMalloc(&c, 32 * sizeof(int));
    parent<<<1, 32>>>(a, b, c);
    int ha, hb, hc;
    cudaMemcpy(&ha, a, sizeof ha, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hb, b, sizeof hb, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hc, c, sizeof hc, cudaMemcpyDeviceToHost);
    printf("a: %d b: %d c: %d\n", ha, hb, hc);
    return 0;
}
