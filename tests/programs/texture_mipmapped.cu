// A mipmapped 2D float array of 8x8 texels and 4 levels (8x8, 4x4, 2x2, 1x1), each level filled through
// cudaGetMipmappedArrayLevel with its number times 10 plus the texel's x (so the level and texel read show
// in the value). Textures with normalized coordinates, point filtering: tex2DLod picks the nearest level
// (ceil(lod + 1/2) - 1, clamped to the levels), the clamps and the bias move it, linear mipmap filtering blends
// the two levels around lod by its fraction, tex2DGrad takes the level from the larger gradient (in level-0
// texels), and tex2D reads level 0 (lod 0, then the bias and clamps). Linear filtering within a level weighs
// the texels as without mipmaps. A surface object over level 3 (made without cudaArraySurfaceLoadStore, as GPUs
// allow) writes its texel, which tex2DLod then reads. cudaFreeArray of a level is cudaErrorInvalidValue.
// @stdout levels: 4, level 2 is 2x2
// @stdout point: 0 0 10 10 20 30 30 0
// @stdout clamped: 10 20 20 20
// @stdout bias: 20 30
// @stdout blended: 5 10 27.5
// @stdout grad: 0 10 20 30
// @stdout tex2D: 3 10
// @stdout filtered: 1.5 10.5
// @stdout surface: 99
// @stdout free a level: cudaErrorInvalidValue
// @exit 0
// @launches 10
// @expect clean
#include <cstdio>
#include <cstring>

__global__ void at_lods(cudaTextureObject_t t, float x, const float *lods, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(t, x, 0.0625f, lods[i]);
}

__global__ void at_grads(cudaTextureObject_t t, float x, const float *grads, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex2DGrad<float>(t, x, 0.0625f, make_float2(grads[i], 0), make_float2(0, grads[i] / 2));
}

__global__ void write_texel(cudaSurfaceObject_t s, float v) { surf2Dwrite(v, s, 0, 0); }

__global__ void plain(cudaTextureObject_t t, float x, float *out) { *out = tex2D<float>(t, x, 0.0625f); }

static cudaTextureObject_t texture(cudaMipmappedArray_t m, cudaTextureFilterMode mip, float bias, float lo, float hi,
                                   cudaTextureFilterMode filter = cudaFilterModePoint) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = m;
    cudaTextureDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.normalizedCoords = 1;
    desc.filterMode = filter;
    desc.addressMode[0] = desc.addressMode[1] = cudaAddressModeClamp;
    desc.mipmapFilterMode = mip;
    desc.mipmapLevelBias = bias;
    desc.minMipmapLevelClamp = lo;
    desc.maxMipmapLevelClamp = hi;
    cudaTextureObject_t t;
    cudaCreateTextureObject(&t, &res, &desc, nullptr);
    return t;
}

// Each lane's result, printed as `label: v v ...`.
static void run(const char *label, void (*kernel)(cudaTextureObject_t, float, const float *, float *, int), cudaTextureObject_t t,
                const float *in, int n, float x = 0.0625f) {
    float *d_in, *d_out, out[8];
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, in, n * sizeof(float), cudaMemcpyHostToDevice);
    kernel<<<1, 32>>>(t, x, d_in, d_out, n);
    cudaMemcpy(out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%s:", label);
    for (int i = 0; i < n; i++) printf(" %g", out[i]);
    printf("\n");
    cudaFree(d_in);
    cudaFree(d_out);
}

int main() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t m;
    cudaMallocMipmappedArray(&m, &f, make_cudaExtent(8, 8, 0), 9); // clamped to 4 levels
    int levels = 0;
    cudaArray_t level = nullptr, last = nullptr;
    cudaExtent extent = {};
    for (unsigned l = 0; cudaGetMipmappedArrayLevel(&level, m, l) == cudaSuccess; l++, levels++) {
        cudaArrayGetInfo(nullptr, &extent, nullptr, level);
        float texels[64];
        for (size_t y = 0; y < extent.height; y++)
            for (size_t x = 0; x < extent.width; x++) texels[y * extent.width + x] = 10.0f * l + x;
        cudaMemcpy2DToArray(level, 0, 0, texels, extent.width * sizeof(float), extent.width * sizeof(float),
                            extent.height, cudaMemcpyHostToDevice);
        if (l == 2) last = level;
    }
    cudaArrayGetInfo(nullptr, &extent, nullptr, last);
    printf("levels: %d, level 2 is %zux%zu\n", levels, extent.width, extent.height);

    float lods[] = {-1, 0.5f, 0.51f, 1.4f, 2, 2.6f, 7, 0};
    run("point", at_lods, texture(m, cudaFilterModePoint, 0, 0, 3), lods, 8);
    float clamped[] = {0, 2, 3, 7};
    run("clamped", at_lods, texture(m, cudaFilterModePoint, 0, 1, 2), clamped, 4);
    float biased[] = {1, 7};
    run("bias", at_lods, texture(m, cudaFilterModePoint, 1, 0, 3), biased, 2);
    float blend[] = {0.5f, 1, 2.75f};
    run("blended", at_lods, texture(m, cudaFilterModeLinear, 0, 0, 3), blend, 3);
    float grads[] = {0.125f, 0.25f, 0.5f, 1};
    run("grad", at_grads, texture(m, cudaFilterModePoint, 0, 0, 3), grads, 4);

    float *d, h[2];
    cudaMalloc(&d, sizeof(float));
    cudaTextureObject_t t0 = texture(m, cudaFilterModePoint, 0, 0, 3), t1 = texture(m, cudaFilterModePoint, 1, 0, 3);
    plain<<<1, 1>>>(t0, 0.4375f, d);
    cudaMemcpy(&h[0], d, sizeof(float), cudaMemcpyDeviceToHost);
    plain<<<1, 1>>>(t1, 0.0625f, d);
    cudaMemcpy(&h[1], d, sizeof(float), cudaMemcpyDeviceToHost);
    printf("tex2D: %g %g\n", h[0], h[1]);
    float filtered[] = {0, 1};
    run("filtered", at_lods, texture(m, cudaFilterModePoint, 0, 0, 3, cudaFilterModeLinear), filtered, 2, 0.25f);
    cudaArray_t top;
    cudaGetMipmappedArrayLevel(&top, m, 3);
    cudaResourceDesc surface_res;
    memset(&surface_res, 0, sizeof surface_res);
    surface_res.resType = cudaResourceTypeArray, surface_res.res.array.array = top;
    cudaSurfaceObject_t surface;
    cudaCreateSurfaceObject(&surface, &surface_res);
    write_texel<<<1, 1>>>(surface, 99);
    float three[] = {3};
    run("surface", at_lods, texture(m, cudaFilterModePoint, 0, 0, 3), three, 1);
    printf("free a level: %s\n", cudaGetErrorName(cudaFreeArray(last)));
    cudaFree(d);
    cudaFreeMipmappedArray(m);
    return 0;
}
