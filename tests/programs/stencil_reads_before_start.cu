// A stencil that loads each cell's northern neighbour before testing for the top edge, as a
// well-known image-diffusion benchmark does: the first row reads the row before its buffer, the
// program's first allocation, below which no device memory lies. The finding names the
// allocation and the distance; the GPU's error reaches the program at the next synchronisation.
// @stdout sync: an illegal memory access was encountered
// @exit 1
// @launches 1
// @expect out-of-bounds 13
#include <cstdio>

__global__ void smooth(const float *in, float *out, int width) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * width + x] = in[(y - 1) * width + x];
    if (y == 0)
        out[x] = in[x];
}

int main() {
    float *in, *out;
    cudaMalloc(&in, 4 * 32 * sizeof(float));
    cudaMalloc(&out, 4 * 32 * sizeof(float));
    cudaMemset(in, 0, 4 * 32 * sizeof(float));
    smooth<<<4, 32>>>(in, out, 32);
    printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
