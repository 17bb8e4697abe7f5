// @arch sm_90a
// @stdout tiles match
// @exit 0
// @launches 1
// @expect clean
// A map the kernel builds from zeroed bytes: tests/kernels/tma/build_from_zeros.cu fills in every field of a
// 2D f32 map of a 40x100 tensor (box 16x32) in shared memory, copies it to global memory and loads the box at
// column 80, row 2 through it. The host checks every element: the tensor's where the box lies inside it,
// zeros past its right edge (columns 100 and up).
#include <cuda.h>
#include <cstdio>
#include "../kernels/tma/build_from_zeros.cu"  // build: the box through the map it built, to `out`

int main()
{
    const int rows = 40, cols = 100;
    static float host[rows * cols], out[512];
    for (int i = 0; i < rows * cols; i++)
        host[i] = i;
    float *tensor, *d_out;
    CUtensorMap* gmap;
    cudaMalloc(&tensor, sizeof host);
    cudaMalloc(&d_out, sizeof out);
    cudaMalloc(&gmap, sizeof(CUtensorMap));
    cudaMemcpy(tensor, host, sizeof host, cudaMemcpyHostToDevice);
    build<<<1, 512>>>(gmap, tensor, d_out);
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int t = 0; t < 512; t++) {
        int r = 2 + t / 32, c = 80 + t % 32;
        float want = c < cols ? r * cols + c : 0;
        wrong += out[t] != want;
    }
    printf(wrong ? "%d elements differ\n" : "tiles match\n", wrong);
    cudaFree(tensor);
    cudaFree(d_out);
    cudaFree(gmap);
    return 0;
}
