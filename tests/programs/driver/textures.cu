// A kernel a driver-API program loads (textures_host.cu): each thread fetches the texel at its (x, y) from a
// 2D texture object and writes it out. Race-free.
extern "C" __global__ void fetch(float *out, cudaTextureObject_t texture, int width) {
    int x = threadIdx.x, y = threadIdx.y;
    out[y * width + x] = tex2D<float>(texture, x + 0.5f, y + 0.5f);
}
