// Textures over pitched 2D memory (cudaMallocPitch, cudaResourceTypePitch2D): uchar4 texels read as
// normalized floats with nearest-point filtering and border addressing (a fetch left of the image gives the
// border colour), and half-float texels read as floats with clamping. Clean.
// @stdout rgba 0.0000 0.2000 1.0000 0.5020
// @stdout border 0.25 0.50 0.75 1.00
// @stdout half 1.5 -2.0 -2.0
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>
#include <cuda_fp16.h>

__global__ void read(cudaTextureObject_t rgba, cudaTextureObject_t halves, float4 *colours, float *values) {
    colours[0] = tex2D<float4>(rgba, 2.5f, 1.5f);
    colours[1] = tex2D<float4>(rgba, -0.5f, 0.5f);
    values[0] = tex2D<float>(halves, 0.5f, 0.5f);
    values[1] = tex2D<float>(halves, 1.5f, 0.5f);
    values[2] = tex2D<float>(halves, 9.0f, -3.0f);
}

int main() {
    const int w = 3, h = 2;
    uchar4 image[h][w] = {};
    image[1][2] = make_uchar4(0, 51, 255, 128);
    __half numbers[1][2] = {{__float2half(1.5f), __float2half(-2.0f)}};
    uchar4 *pixels;
    __half *half_data;
    size_t pitch, half_pitch;
    cudaMallocPitch(&pixels, &pitch, w * sizeof(uchar4), h);
    cudaMallocPitch(&half_data, &half_pitch, 2 * sizeof(__half), 1);
    cudaMemcpy2D(pixels, pitch, image, w * sizeof(uchar4), w * sizeof(uchar4), h, cudaMemcpyHostToDevice);
    cudaMemcpy2D(half_data, half_pitch, numbers, 2 * sizeof(__half), 2 * sizeof(__half), 1, cudaMemcpyHostToDevice);

    cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = pixels;
    res.res.pitch2D.desc = cudaCreateChannelDesc<uchar4>();
    res.res.pitch2D.width = w;
    res.res.pitch2D.height = h;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeBorder;
    td.borderColor[0] = 0.25f, td.borderColor[1] = 0.5f, td.borderColor[2] = 0.75f, td.borderColor[3] = 1.0f;
    td.readMode = cudaReadModeNormalizedFloat;
    cudaTextureObject_t rgba, halves;
    cudaCreateTextureObject(&rgba, &res, &td, nullptr);

    res.res.pitch2D.devPtr = half_data;
    res.res.pitch2D.desc = cudaCreateChannelDescHalf();
    res.res.pitch2D.width = 2;
    res.res.pitch2D.height = 1;
    res.res.pitch2D.pitchInBytes = half_pitch;
    td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    cudaCreateTextureObject(&halves, &res, &td, nullptr);

    float4 *colours, c[2];
    float *values, v[3];
    cudaMalloc(&colours, sizeof c);
    cudaMalloc(&values, sizeof v);
    read<<<1, 1>>>(rgba, halves, colours, values);
    cudaMemcpy(c, colours, sizeof c, cudaMemcpyDeviceToHost);
    cudaMemcpy(v, values, sizeof v, cudaMemcpyDeviceToHost);
    printf("rgba %.4f %.4f %.4f %.4f\n", c[0].x, c[0].y, c[0].z, c[0].w);
    printf("border %.2f %.2f %.2f %.2f\n", c[1].x, c[1].y, c[1].z, c[1].w);
    printf("half %.1f %.1f %.1f\n", v[0], v[1], v[2]);
    cudaDestroyTextureObject(rgba);
    cudaDestroyTextureObject(halves);
    cudaFree(pixels);
    cudaFree(half_data);
    cudaFree(colours);
    cudaFree(values);
    return 0;
}
