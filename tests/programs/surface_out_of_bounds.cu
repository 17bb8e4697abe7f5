// surf2Dwrite with the default boundary mode (cudaBoundaryModeTrap) one element past the end of each row: the
// x coordinate is in bytes, and thread 8 of a row of 8 ints writes bytes 32..35. An out-of-bounds finding at
// the store, and the launch fails as on a GPU (an illegal address, returned by the next synchronising call).
// @stdout cudaErrorIllegalAddress
// @exit 1
// @launches 1
// @expect out-of-bounds 11
#include <cstdio>

__global__ void fill(cudaSurfaceObject_t s) {
    surf2Dwrite((int)threadIdx.x, s, threadIdx.x * sizeof(int), blockIdx.x);
}

int main() {
    const int w = 8, h = 2;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h, cudaArraySurfaceLoadStore);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaSurfaceObject_t surf;
    cudaCreateSurfaceObject(&surf, &res);
    fill<<<h, w + 1>>>(surf);
    printf("%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
