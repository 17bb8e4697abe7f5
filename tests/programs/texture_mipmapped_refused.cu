// Mipmapped cube maps are not supported: cudaMallocMipmappedArray with cudaArrayCubemap stops the program (exit
// status 2) with a message naming the call and its line.
// @stdout before
// @exit 2
// @expect_error texture_mipmapped_refused.cu:14: cudaMallocMipmappedArray of a cubemap is not supported
#include <cstdio>

int main() {
    printf("before\n");
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mipmap;
    cudaExtent extent = make_cudaExtent(16, 16, 6);
    fflush(stdout);
    cudaMallocMipmappedArray(&mipmap, &desc, extent, 4, cudaArrayCubemap);
    printf("after\n");
    return 0;
}
