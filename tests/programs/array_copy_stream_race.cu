// A CUDA array is device memory like any other: a kernel on stream a fetches it through a texture while
// cudaMemcpy2DToArrayAsync on stream b overwrites it, with nothing ordering the two: a data race between the
// texel fetch (line 13) and the copy (line 38). A copy that does not fit the array fails as CUDA fails it.
// @stdout too wide: cudaErrorInvalidValue
// @stdout sum 120
// @exit 1
// @launches 1
// @expect data-race 13 38
#include <cstdio>

__global__ void sum(cudaTextureObject_t t, int *total) {
    int x = threadIdx.x;
    atomicAdd(total, tex2D<int>(t, x + 0.5f, 0.5f));
}

int main() {
    const int w = 16;
    int host[w], *total, result;
    for (int i = 0; i < w; i++) host[i] = i;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, 1);
    cudaMemcpy2DToArray(array, 0, 0, host, sizeof host, sizeof host, 1, cudaMemcpyHostToDevice);
    cudaError_t e = cudaMemcpy2DToArray(array, 4, 0, host, sizeof host, sizeof host, 1, cudaMemcpyHostToDevice);
    printf("too wide: %s\n", cudaGetErrorName(e));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaTextureDesc td = {};
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    cudaMalloc(&total, sizeof(int));
    cudaMemset(total, 0, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    sum<<<1, w, 0, a>>>(tex, total);
    cudaMemcpy2DToArrayAsync(array, 0, 0, host, sizeof host, sizeof host, 1, cudaMemcpyHostToDevice, b);
    cudaDeviceSynchronize();
    cudaMemcpy(&result, total, sizeof(int), cudaMemcpyDeviceToHost);
    printf("sum %d\n", result);
    return 0;
}
