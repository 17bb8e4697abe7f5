// A kernel fetches through a texture object the program has already destroyed: the handle names no live
// texture, which gpurace cannot simulate, so the program stops (exit status 2) with a message naming the
// kernel's line and the handle.
// @stdout first 3
// @exit 2
// @launches 2
// @expect_error texture_destroyed.cu:11: `tex.1d.v4.s32.s32
// @expect_error handle 0x1, which is not a live texture object
#include <cstdio>

__global__ void first(cudaTextureObject_t t, int *out) { *out = tex1Dfetch<int>(t, 0); }

int main() {
    int host = 3, *data, *out;
    cudaMalloc(&data, sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaMemcpy(data, &host, sizeof(int), cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = data;
    res.res.linear.desc = cudaCreateChannelDesc<int>();
    res.res.linear.sizeInBytes = sizeof(int);
    cudaTextureDesc td = {};
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    first<<<1, 1>>>(tex, out);
    cudaMemcpy(&host, out, sizeof(int), cudaMemcpyDeviceToHost);
    printf("first %d\n", host);
    fflush(stdout);
    cudaDestroyTextureObject(tex);
    first<<<1, 1>>>(tex, out);
    cudaDeviceSynchronize();
    printf("after\n");
    return 0;
}
