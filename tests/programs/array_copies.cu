// Copies into, out of and between CUDA arrays: the deprecated 1D forms (a run of bytes from an element on,
// across rows: arrays are dense), their Async forms, cudaMemcpyArrayToArray and cudaMemcpy2DArrayToArray,
// and a 1D array (height 0) read with tex1D. cudaGetTextureObjectResourceDesc gives back the array.
// @stdout 1D row 0 1 2 3 4 5 6 7
// @stdout copied 4 5 6 7 | 0 0 2 3
// @stdout 2D block 5 6 13 14
// @stdout tex1D 2 3 7
// @stdout resource array yes
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void read(cudaTextureObject_t t, float *out) {
    out[0] = tex1D<float>(t, 2.5f);
    out[1] = tex1D<float>(t, 3.0f);  // point filtering: texel 3
    out[2] = tex1D<float>(t, 99.0f); // clamped to the last texel
}

int main() {
    const int w = 4, h = 2;
    float values[w * h], back[w * h] = {};
    for (int i = 0; i < w * h; i++) values[i] = i;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t a, b, line;
    cudaMallocArray(&a, &desc, w, h);
    cudaMallocArray(&b, &desc, w, h);
    cudaMallocArray(&line, &desc, w * h, 0);
    cudaMemcpyToArray(line, 0, 0, values, sizeof values, cudaMemcpyHostToDevice);
    cudaMemcpyFromArray(back, line, 0, 0, sizeof back, cudaMemcpyDeviceToHost);
    printf("1D row %g %g %g %g %g %g %g %g\n", back[0], back[1], back[2], back[3], back[4], back[5], back[6], back[7]);

    float zeros[w * h] = {};
    cudaMemcpyToArrayAsync(b, 0, 0, zeros, sizeof zeros, cudaMemcpyHostToDevice, 0);
    cudaMemcpyToArray(a, 0, 0, values, sizeof values, cudaMemcpyHostToDevice);
    // Elements 2..7 of `a` (from byte 8 of row 0, across the end of the row) to the start of `b`.
    cudaMemcpyArrayToArray(b, 0, 0, a, 2 * sizeof(float), 0, 6 * sizeof(float), cudaMemcpyDeviceToDevice);
    cudaMemcpyFromArrayAsync(back, b, 0, 0, sizeof back, cudaMemcpyDeviceToHost, 0);
    cudaStreamSynchronize(0);
    printf("copied %g %g %g %g | %g %g %g %g\n", back[2], back[3], back[4], back[5], back[6], back[7], back[0], back[1]);

    // Elements 1..2 of both rows of an 8x2 array to elements 0..1 of both rows of `b`.
    cudaArray_t wide;
    cudaMallocArray(&wide, &desc, 8, 2);
    float grid[16];
    for (int i = 0; i < 16; i++) grid[i] = (i / 8) * 8 + i % 8 + 4;
    cudaMemcpy2DToArray(wide, 0, 0, grid, 8 * sizeof(float), 8 * sizeof(float), 2, cudaMemcpyHostToDevice);
    cudaMemcpy2DArrayToArray(b, 0, 0, wide, 1 * sizeof(float), 0, 2 * sizeof(float), 2);
    float block[2][2];
    cudaMemcpy2DFromArray(block, 2 * sizeof(float), b, 0, 0, 2 * sizeof(float), 2, cudaMemcpyDeviceToHost);
    printf("2D block %g %g %g %g\n", block[0][0], block[0][1], block[1][0], block[1][1]);

    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = line;
    cudaTextureDesc td = {};
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    float *out, r[3];
    cudaMalloc(&out, sizeof r);
    read<<<1, 1>>>(tex, out);
    cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    printf("tex1D %g %g %g\n", r[0], r[1], r[2]);
    cudaResourceDesc got;
    cudaGetTextureObjectResourceDesc(&got, tex);
    printf("resource array %s\n", got.resType == cudaResourceTypeArray && got.res.array.array == line ? "yes" : "no");
    return 0;
}
