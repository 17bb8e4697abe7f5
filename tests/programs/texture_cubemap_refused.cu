// Cube map arrays are not supported: cudaMalloc3DArray with cudaArrayCubemap stops the program (exit status
// 2) with a message naming the call, what it asked for and its line.
// @stdout before
// @exit 2
// @expect_error texture_cubemap_refused.cu:13: cudaMalloc3DArray of a cubemap is not supported
#include <cstdio>

int main() {
    printf("before\n");
    fflush(stdout);
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t cube;
    cudaMalloc3DArray(&cube, &desc, make_cudaExtent(8, 8, 6), cudaArrayCubemap);
    printf("after\n");
    return 0;
}
