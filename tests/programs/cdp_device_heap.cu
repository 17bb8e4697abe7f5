// The device heap with CUDA Dynamic Parallelism: thread 0 of `parent` allocates a buffer with cudaMalloc in
// device code, has a child fill it, and tail-launches `finish`, which sums it into `out` and frees it with
// cudaFree. Each thread of `scratch` (no launches) takes 16 bytes with C's malloc, fills them and frees them. A
// request larger than the 8 MiB heap gets NULL from malloc, and cudaErrorMemoryAllocation (2) from cudaMalloc,
// as on a GPU. Clean.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout sum: 2016 status: 0
// @stdout scratch: 0 4 8 12 16 20 24 28
// @stdout too large: null 2
// @exit 0
// @launches 5
// @expect clean
#include <cstdio>

__global__ void fill(int *buffer) {
    buffer[threadIdx.x] = threadIdx.x;
}

__global__ void finish(int *buffer, int *out) {
    int sum = 0;
    for (int i = 0; i < 64; i++)
        sum += buffer[i];
    out[0] = sum;
    cudaFree(buffer);
}

__global__ void parent(int *out) {
    int *buffer;
    out[1] = cudaMalloc((void **)&buffer, 64 * sizeof(int));
    fill<<<1, 64>>>(buffer);
    finish<<<1, 1, 0, cudaStreamTailLaunch>>>(buffer, out);
}

__global__ void scratch(int *out) {
    int *mine = (int *)malloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++)
        mine[i] = threadIdx.x + i;
    out[threadIdx.x] = mine[0] + mine[1] + mine[2] + mine[3];
    free(mine);
}

__global__ void too_large(int *out) {
    void *p = malloc(9 << 20);
    out[0] = p == NULL;
    void *q;
    out[1] = cudaMalloc(&q, 9 << 20);
}

int main() {
    int *out, host[8];
    cudaMalloc(&out, 8 * sizeof(int));
    parent<<<1, 1>>>(out);
    cudaMemcpy(host, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("sum: %d status: %d\n", host[0], host[1]);
    scratch<<<1, 8>>>(out);
    cudaMemcpy(host, out, 8 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("scratch:");
    for (int i = 0; i < 8; i++)
        printf(" %d", host[i] - 6);
    printf("\n");
    too_large<<<1, 1>>>(out);
    cudaMemcpy(host, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("too large: %s %d\n", host[0] ? "null" : "not null", host[1]);
    return 0;
}
