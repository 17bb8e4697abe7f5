// One launch, two blocks on one array: block 0 writes every element through a surface object while block 1
// reads the same elements through a texture object of that array. Nothing orders the two blocks: a data race
// between the surface store (line 14) and the texel fetch (line 16). A second kernel reads only what
// `rows` does not write (row 1 through the texture, row 0 written): no race there.
// @stdout done
// @exit 1
// @launches 2
// @expect data-race 14 16
#include <cstdio>

__global__ void racy(cudaSurfaceObject_t s, cudaTextureObject_t t, float *out) {
    int x = threadIdx.x;
    if (blockIdx.x == 0) {
        surf2Dwrite(1.0f, s, x * sizeof(float), 0);
    } else {
        out[x] = tex2D<float>(t, x + 0.5f, 0.5f);
    }
}

__global__ void rows(cudaSurfaceObject_t s, cudaTextureObject_t t, float *out) {
    int x = threadIdx.x;
    if (blockIdx.x == 0) {
        surf2Dwrite(2.0f, s, x * sizeof(float), 0);
    } else {
        out[x] = tex2D<float>(t, x + 0.5f, 1.5f);
    }
}

int main() {
    const int w = 32, h = 2;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h, cudaArraySurfaceLoadStore);
    float zeros[w * h] = {};
    cudaMemcpy2DToArray(array, 0, 0, zeros, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaSurfaceObject_t surf;
    cudaCreateSurfaceObject(&surf, &res);
    cudaTextureDesc td = {};
    td.filterMode = cudaFilterModePoint;
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    float *out;
    cudaMalloc(&out, w * sizeof(float));
    racy<<<2, w>>>(surf, tex, out);
    rows<<<2, w>>>(surf, tex, out);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaDestroyTextureObject(tex);
    cudaDestroySurfaceObject(surf);
    cudaFreeArray(array);
    cudaFree(out);
    return 0;
}
