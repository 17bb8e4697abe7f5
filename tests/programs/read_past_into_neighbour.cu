// A stencil that reads the next row without testing for the last one, as a well-known image-diffusion
// benchmark does: the last row reads a whole row (8 KiB) past the end of `in`. Packed a page apart, that
// row would be the start of `out`, which other threads write, and the read would look like a race on
// `out`; cudaMalloc memory is addressed far apart (README "Memory layout under exec"), so it is an
// out-of-bounds read and nothing else. The GPU's error reaches the program at the next synchronisation.
// @stdout sync: an illegal memory access was encountered
// @exit 1
// @launches 1
// @expect out-of-bounds 14
#include <cstdio>

__global__ void shift_up(const float *in, float *out, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    out[y * width + x] = in[(y + 1) * width + x];
}

int main() {
    const int width = 2048, rows = 2;
    float *in, *out;
    cudaMalloc(&in, rows * width * sizeof(float));
    cudaMalloc(&out, rows * width * sizeof(float));
    cudaMemset(in, 0, rows * width * sizeof(float));
    shift_up<<<dim3(width / 256, rows), 256>>>(in, out, width);
    printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
