// A cube map texture: six 4x4 faces (cudaMalloc3DArray with cudaArrayCubemap, filled with cudaMemcpy3D),
// fetched with texCubemap along directions that point at each face's texel centres and at a face's corner
// region, with linear filtering. Face f holds 100 * f + 10 * row + column. A layered cube map stops the program.
// @stdout face 0 (+x): 0 1 2 3 ... 33
// @stdout face 1 (-x): 100 101 102 103 ... 133
// @stdout face 2 (+y): 200 201 202 203 ... 233
// @stdout face 3 (-y): 300 301 302 303 ... 333
// @stdout face 4 (+z): 400 401 402 403 ... 433
// @stdout face 5 (-z): 500 501 502 503 ... 533
// @stdout between texels: 506.5
// @exit 2
// @launches 2
// @expect_error texture_cubemap.cu:78: cudaMalloc3DArray of a layered cubemap is not supported
#include <cstdio>

const int W = 4;

// The direction of texel (x, y) of `face`, as the CUDA Programming Guide's cube map table maps them.
__device__ void direction(int face, float u, float v, float &cx, float &cy, float &cz) {
    switch (face) {
    case 0: cx = 1; cy = -v; cz = -u; break;
    case 1: cx = -1; cy = -v; cz = u; break;
    case 2: cx = u; cy = 1; cz = v; break;
    case 3: cx = u; cy = -1; cz = -v; break;
    case 4: cx = u; cy = -v; cz = 1; break;
    default: cx = -u; cy = -v; cz = -1; break;
    }
}

__global__ void read_faces(float *out, cudaTextureObject_t tex) {
    int x = threadIdx.x, y = threadIdx.y, face = blockIdx.x;
    float u = (x + 0.5f) / W * 2 - 1, v = (y + 0.5f) / W * 2 - 1, cx, cy, cz;
    direction(face, u, v, cx, cy, cz);
    out[(face * W + y) * W + x] = texCubemap<float>(tex, cx, cy, cz);
}

__global__ void between(float *out, cudaTextureObject_t tex) {
    float cx, cy, cz;
    direction(5, 2.0f / W * 2 - 1, 1.0f / W * 2 - 1, cx, cy, cz); // where texels (1, 0), (2, 0), (1, 1) and (2, 1) of -z meet
    *out = texCubemap<float>(tex, cx, cy, cz);
}

int main() {
    float host[6 * W * W];
    for (int f = 0; f < 6; f++)
        for (int y = 0; y < W; y++)
            for (int x = 0; x < W; x++) host[(f * W + y) * W + x] = 100 * f + 10 * y + x;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t cube;
    cudaMalloc3DArray(&cube, &desc, make_cudaExtent(W, W, 6), cudaArrayCubemap);
    cudaMemcpy3DParms copy = {};
    copy.srcPtr = make_cudaPitchedPtr(host, W * sizeof(float), W, W);
    copy.dstArray = cube;
    copy.extent = make_cudaExtent(W, W, 6);
    copy.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3D(&copy);
    cudaResourceDesc resource = {};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = cube;
    cudaTextureDesc sampling = {};
    sampling.normalizedCoords = true;
    sampling.filterMode = cudaFilterModeLinear;
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &resource, &sampling, nullptr);
    float *out;
    cudaMalloc(&out, sizeof host);
    read_faces<<<6, dim3(W, W)>>>(out, tex);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    const char *names[] = {"+x", "-x", "+y", "-y", "+z", "-z"};
    for (int f = 0; f < 6; f++)
        printf("face %d (%s): %g %g %g %g ... %g\n", f, names[f], host[f * W * W], host[f * W * W + 1],
               host[f * W * W + 2], host[f * W * W + 3], host[f * W * W + W * W - 1]);
    between<<<1, 1>>>(out, tex);
    cudaMemcpy(host, out, sizeof(float), cudaMemcpyDeviceToHost);
    printf("between texels: %g\n", host[0]);
    fflush(stdout);
    cudaArray_t layered;
    cudaMalloc3DArray(&layered, &desc, make_cudaExtent(W, W, 12), cudaArrayCubemap | cudaArrayLayered);
    printf("after\n");
    return 0;
}
