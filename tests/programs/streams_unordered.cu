// Work that streams leave unordered, one race of each kind:
// - a non-blocking stream does not wait for the legacy default stream: `scale` on stream `quiet` (line
//   20) writes what `fill` on the legacy stream (line 17) wrote just before;
// - two created streams, no event: `fill` on `a` writes x (line 17) and a cudaMemsetAsync on `b` (line
//   35) sets the same bytes;
// (The cudaDeviceSynchronize between the two pairs keeps the first pair apart from the second.)
// The printed value is what running the work in issue order gives.
// @stdout x[5] = 0
// @exit 1
// @launches 3
// @expect data-race 17 20
// @expect data-race 17 35
#include <cstdio>

__global__ void fill(int *x, int v) {
    int i = threadIdx.x;
    x[i] = v + i;
}

__global__ void scale(int *x, int k) { x[threadIdx.x] *= k; }

int main() {
    const int n = 32;
    int *x, *y;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&y, n * sizeof(int));
    cudaStream_t quiet, a, b;
    cudaStreamCreateWithFlags(&quiet, cudaStreamNonBlocking);
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    fill<<<1, n>>>(y, 1);
    scale<<<1, n, 0, quiet>>>(y, 3);
    cudaDeviceSynchronize();
    fill<<<1, n, 0, a>>>(x, 7);
    cudaMemsetAsync(x, 0, n * sizeof(int), b);
    cudaDeviceSynchronize();
    int host[n];
    cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost);
    printf("x[5] = %d\n", host[5]);
    cudaStreamDestroy(quiet);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(x);
    cudaFree(y);
    return 0;
}
