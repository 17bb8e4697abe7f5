// Surface objects on a 2D CUDA array of uchar4: one kernel writes every element with surf2Dwrite (x in bytes),
// a second reads them back with surf2Dread, with cudaBoundaryModeZero for reads one row past the end (zero,
// no fault). The host copies the array out with cudaMemcpy2DFromArray. Kernels on one stream: clean.
// @stdout array 8x4 flags 2
// @stdout element (5,2) = 5 2 7 255
// @stdout past the end reads 0
// @stdout read back 32 of 32
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__global__ void fill(cudaSurfaceObject_t s) {
    int x = threadIdx.x, y = blockIdx.x;
    surf2Dwrite(make_uchar4(x, y, x + y, 255), s, x * sizeof(uchar4), y);
}

__global__ void check(cudaSurfaceObject_t s, int *good, int *past) {
    int x = threadIdx.x, y = blockIdx.x;
    uchar4 v = surf2Dread<uchar4>(s, x * sizeof(uchar4), y);
    if (v.x == x && v.y == y && v.z == x + y && v.w == 255) atomicAdd(good, 1);
    uchar4 z = surf2Dread<uchar4>(s, x * sizeof(uchar4), y + 4, cudaBoundaryModeZero);
    atomicAdd(past, z.x + z.y + z.z + z.w);
}

int main() {
    const int w = 8, h = 4;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h, cudaArraySurfaceLoadStore);
    cudaExtent extent;
    unsigned flags;
    cudaArrayGetInfo(nullptr, &extent, &flags, array);
    printf("array %zux%zu flags %u\n", extent.width, extent.height, flags);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaSurfaceObject_t surf;
    cudaCreateSurfaceObject(&surf, &res);
    int *counts, host[2];
    cudaMalloc(&counts, sizeof host);
    cudaMemset(counts, 0, sizeof host);
    fill<<<h, w>>>(surf);
    check<<<h, w>>>(surf, counts, counts + 1);
    uchar4 out[h][w];
    cudaMemcpy2DFromArray(out, w * sizeof(uchar4), array, 0, 0, w * sizeof(uchar4), h, cudaMemcpyDeviceToHost);
    cudaMemcpy(host, counts, sizeof host, cudaMemcpyDeviceToHost);
    printf("element (5,2) = %d %d %d %d\n", out[2][5].x, out[2][5].y, out[2][5].z, out[2][5].w);
    printf("past the end reads %d\n", host[1]);
    printf("read back %d of %d\n", host[0], w * h);
    cudaDestroySurfaceObject(surf);
    cudaFreeArray(array);
    cudaFree(counts);
    return 0;
}
