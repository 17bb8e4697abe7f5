// 3D and layered CUDA arrays (cudaMalloc3DArray): a 3D float array filled with cudaMemcpy3D and read with
// tex3D (trilinear filtering; the weights are quarters, exact in 9-bit fixed point), written and read back
// through surf3Dwrite/surf3Dread; a layered 2D array whose layers one kernel writes with surf2DLayeredwrite
// and another reads with tex2DLayered. The host checks every value.
// @stdout extent 4 3 2, layered 3 2 3
// @stdout tex3D 13.75 (expected 13.75)
// @stdout surf3D 7 at (1,2,1): 7
// @stdout layers 0 100 200 | 3 103 203
// @exit 0
// @launches 3
// @expect clean
#include <cstdio>

__global__ void volume(cudaTextureObject_t t, cudaSurfaceObject_t s, float *out, int *cell) {
    out[0] = tex3D<float>(t, 1.25f, 1.75f, 1.0f);
    surf3Dwrite(7.0f, s, 1 * sizeof(float), 2, 1);
    *cell = (int)surf3Dread<float>(s, 1 * sizeof(float), 2, 1);
}

__global__ void write_layers(cudaSurfaceObject_t s) {
    int x = threadIdx.x, y = threadIdx.y, layer = blockIdx.x;
    surf2DLayeredwrite(100 * layer + 2 * y + x, s, x * sizeof(int), y, layer);
}

__global__ void read_layers(cudaTextureObject_t t, int *out) {
    int layer = threadIdx.x;
    out[layer] = tex2DLayered<int>(t, 0.5f, 0.5f, layer);          // texel (0, 0)
    out[3 + layer] = tex2DLayered<int>(t, 1.5f, 1.5f, layer);  // texel (1, 1)
}

int main() {
    const int w = 4, h = 3, d = 2;
    float host[d][h][w];
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) host[z][y][x] = 16 * z + 4 * y + x;
    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    cudaArray_t vol;
    cudaMalloc3DArray(&vol, &fdesc, make_cudaExtent(w, h, d), cudaArraySurfaceLoadStore);
    cudaMemcpy3DParms copy = {};
    copy.srcPtr = make_cudaPitchedPtr(host, w * sizeof(float), w, h);
    copy.dstArray = vol;
    copy.extent = make_cudaExtent(w, h, d);
    copy.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3D(&copy);
    cudaExtent extent;
    cudaArrayGetInfo(nullptr, &extent, nullptr, vol);

    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = vol;
    cudaTextureDesc td = {};
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    cudaSurfaceObject_t surf;
    cudaCreateSurfaceObject(&surf, &res);
    float *out, value;
    int *cell, cell_value;
    cudaMalloc(&out, sizeof(float));
    cudaMalloc(&cell, sizeof(int));
    volume<<<1, 1>>>(tex, surf, out, cell);
    cudaMemcpy(&value, out, sizeof value, cudaMemcpyDeviceToHost);
    cudaMemcpy(&cell_value, cell, sizeof cell_value, cudaMemcpyDeviceToHost);
    // x 1.25 -> texels 0,1 weight 0.75; y 1.75 -> texels 1,2 weight 0.25; z 1.0 -> texels 0,1 weight 0.5.
    float expected = 0;
    for (int dz = 0; dz < 2; dz++)
        for (int dy = 0; dy < 2; dy++)
            for (int dx = 0; dx < 2; dx++)
                expected += (dx ? 0.75f : 0.25f) * (dy ? 0.25f : 0.75f) * 0.5f * host[dz][1 + dy][dx];

    const int lw = 2, lh = 2, layers = 3;
    cudaChannelFormatDesc idesc = cudaCreateChannelDesc<int>();
    cudaArray_t stack;
    cudaMalloc3DArray(&stack, &idesc, make_cudaExtent(lw, lh, layers), cudaArrayLayered | cudaArraySurfaceLoadStore);
    cudaExtent stack_extent;
    unsigned flags;
    cudaArrayGetInfo(nullptr, &stack_extent, &flags, stack);
    printf("extent %zu %zu %zu, layered %u %zu %zu\n", extent.width, extent.height, extent.depth, flags,
           stack_extent.width, stack_extent.depth);
    printf("tex3D %.2f (expected %.2f)\n", value, expected);
    printf("surf3D 7 at (1,2,1): %d\n", cell_value);

    res.res.array.array = stack;
    cudaSurfaceObject_t layer_surf;
    cudaCreateSurfaceObject(&layer_surf, &res);
    td = {};
    cudaTextureObject_t layer_tex;
    cudaCreateTextureObject(&layer_tex, &res, &td, nullptr);
    int *got, g[6];
    cudaMalloc(&got, sizeof g);
    write_layers<<<layers, dim3(lw, lh)>>>(layer_surf);
    read_layers<<<1, layers>>>(layer_tex, got);
    cudaMemcpy(g, got, sizeof g, cudaMemcpyDeviceToHost);
    printf("layers %d %d %d | %d %d %d\n", g[0], g[1], g[2], g[3], g[4], g[5]);
    return 0;
}
