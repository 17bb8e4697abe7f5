// tex2Dgather on a 2D array of floats (cudaArrayTextureGather): component 0 of the four texels bilinear
// filtering at (1.0, 1.0) would weigh, counter-clockwise from the lower left: (0,1), (1,1), (1,0), (0,0).
// At (3.9, 1.0), clamped, the footprint's right column (x = 4) repeats the edge column (x = 3).
// @stdout gather 10 11 1 0
// @stdout edge 13 13 3 3
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void gather(cudaTextureObject_t t, float4 *out) {
    out[0] = tex2Dgather<float4>(t, 1.0f, 1.0f, 0);
    out[1] = tex2Dgather<float4>(t, 3.9f, 1.0f, 0);
}

int main() {
    const int w = 4, h = 2;
    float host[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) host[y][x] = 10 * y + x;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h, cudaArrayTextureGather);
    cudaMemcpy2DToArray(array, 0, 0, host, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    float4 *out, r[2];
    cudaMalloc(&out, sizeof r);
    gather<<<1, 1>>>(tex, out);
    cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    printf("gather %g %g %g %g\n", r[0].x, r[0].y, r[0].z, r[0].w);
    printf("edge %g %g %g %g\n", r[1].x, r[1].y, r[1].z, r[1].w);
    return 0;
}
