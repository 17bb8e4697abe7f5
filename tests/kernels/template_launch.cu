// @kernel scale<double>(double*, double, int)
// @launch --grid 1 --block 64 --arg buf:100:iota --arg 2.0 --arg 100
// @expect clean
// A template kernel instantiated by its launch in host code.
#include <cstdio>

template <typename T>
__global__ void scale(T* v, T factor, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v[i] *= factor;
}

int main()
{
    double* v;
    cudaMalloc(&v, 100 * sizeof(double));
    cudaMemset(v, 0, 100 * sizeof(double)); // `scale` reads v: without this, an uninitialized-read under exec
    scale<double><<<1, 64>>>(v, 2.0, 100);
    cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(v);
    return 0;
}
