// A 2D texture over a CUDA array of floats, read with linear filtering and normalized coordinates, wrap on x
// and clamp on y. Each thread samples between texels; the host checks every result against the Programming
// Guide's formula (texel centres at i + 0.5, weights from the coordinate's fraction) computed on the host.
// The coordinates are chosen so that every weight is a multiple of 1/256, exact in 9-bit fixed point.
// cudaGetChannelDesc and cudaGetTextureObjectTextureDesc give back what the program set.
// @stdout channels 32 0 0 0 kind 2
// @stdout filter 1 normalized 1
// @stdout 32 samples match
// @exit 0
// @launches 1
// @expect clean
#include <cmath>
#include <cstdio>

__global__ void sample(cudaTextureObject_t tex, float *out, int width, int height) {
    int i = threadIdx.x;
    float x = (i % 8 - 2 + 0.75f) / width;  // from left of the texture, across the wrap
    float y = (i / 8 - 1 + 0.25f) / height; // from above the texture: clamped
    out[i] = tex2D<float>(tex, x, y);
}

static float texel(const float *t, int w, int h, int x, int y) {
    x = ((x % w) + w) % w;
    y = y < 0 ? 0 : (y >= h ? h - 1 : y);
    return t[y * w + x];
}

int main() {
    const int w = 4, h = 3, n = 32;
    float host[w * h];
    for (int i = 0; i < w * h; i++) host[i] = (float)(i * i % 7) - 1.5f;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h);
    cudaMemcpy2DToArray(array, 0, 0, host, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    cudaChannelFormatDesc back;
    cudaGetChannelDesc(&back, array);
    printf("channels %d %d %d %d kind %d\n", back.x, back.y, back.z, back.w, (int)back.f);

    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeWrap;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    cudaTextureDesc td_back;
    cudaGetTextureObjectTextureDesc(&td_back, tex);
    printf("filter %d normalized %d\n", (int)td_back.filterMode, td_back.normalizedCoords);

    float *out, result[n];
    cudaMalloc(&out, n * sizeof(float));
    sample<<<1, n>>>(tex, out, w, h);
    cudaMemcpy(result, out, sizeof result, cudaMemcpyDeviceToHost);
    int match = 0;
    for (int i = 0; i < n; i++) {
        float xb = (i % 8 - 2 + 0.75f) - 0.5f, yb = (i / 8 - 1 + 0.25f) - 0.5f;
        int x0 = (int)floorf(xb), y0 = (int)floorf(yb);
        float a = xb - x0, b = yb - y0;
        float expect = (1 - a) * (1 - b) * texel(host, w, h, x0, y0) + a * (1 - b) * texel(host, w, h, x0 + 1, y0) +
                       (1 - a) * b * texel(host, w, h, x0, y0 + 1) + a * b * texel(host, w, h, x0 + 1, y0 + 1);
        match += fabsf(result[i] - expect) < 1e-6f;
    }
    printf("%d samples match\n", match);
    cudaDestroyTextureObject(tex);
    cudaFreeArray(array);
    cudaFree(out);
    return 0;
}
