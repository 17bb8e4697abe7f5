// @with parts/rdc_device.cu
// @nvcc_flags -rdc=true
// @stdout 3 765
// @stdout counted 1
// @exit 1
// @launches 1
// @expect data-race 20 20
// Relocatable device code: the kernel calls a __device__ function and counts in a __device__ variable that
// parts/rdc_device.cu defines, and the host reads the variable by its symbol. Counting with a plain
// read-modify-write races between every two threads.
#include <cstdio>

extern __device__ int hits;
extern __device__ int scaled(int x);

__global__ void fill(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = scaled(i);
    hits = hits + 1;
}

int main()
{
    int *d;
    cudaMalloc(&d, 256 * sizeof(int));
    fill<<<2, 128>>>(d, 256);
    int h[256];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int total = 0;
    cudaMemcpyFromSymbol(&total, hits, sizeof total);
    printf("%d %d\n", h[1], h[255]);
    printf("counted %d\n", total > 0);
    cudaFree(d);
    return 0;
}
