// cudaMemcpy3D for the cases CUDA arrays of one slice have: host memory to a region of a 2D array (positions
// and width in elements), the array to pitched device memory (cudaMalloc3D-style pitched pointers, a
// position in bytes), and a copy of two slices between pitched buffers. A 3D copy into an array of one
// slice with depth 2 fails as CUDA fails it. Clean.
// @stdout array 0 0 0 0 | 0 1 2 0 | 0 3 4 0
// @stdout pitched 1 2 | 3 4
// @stdout slices 10 11 12 13 14 15 16 17
// @stdout depth 2 into an array: cudaErrorInvalidValue
// @exit 0
// @launches 0
// @expect clean
#include <cstdio>

int main() {
    const int w = 4, h = 3;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h);
    int zeros[w * h] = {}, two_by_two[4] = {1, 2, 3, 4};
    cudaMemcpy2DToArray(array, 0, 0, zeros, w * sizeof(int), w * sizeof(int), h, cudaMemcpyHostToDevice);

    cudaMemcpy3DParms in = {};
    in.srcPtr = make_cudaPitchedPtr(two_by_two, 2 * sizeof(int), 2, 2);
    in.dstArray = array;
    in.dstPos = make_cudaPos(1, 1, 0);
    in.extent = make_cudaExtent(2, 2, 1);
    in.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3D(&in);
    int back[w * h];
    cudaMemcpy2DFromArray(back, w * sizeof(int), array, 0, 0, w * sizeof(int), h, cudaMemcpyDeviceToHost);
    printf("array %d %d %d %d | %d %d %d %d | %d %d %d %d\n", back[0], back[1], back[2], back[3], back[4], back[5],
           back[6], back[7], back[8], back[9], back[10], back[11]);

    cudaPitchedPtr pitched;
    cudaMalloc3D(&pitched, make_cudaExtent(2 * sizeof(int), 2, 1));
    cudaMemcpy3DParms out = {};
    out.srcArray = array;
    out.srcPos = make_cudaPos(1, 1, 0);
    out.dstPtr = pitched;
    out.extent = make_cudaExtent(2, 2, 1);
    out.kind = cudaMemcpyDeviceToDevice;
    cudaMemcpy3D(&out);
    int got[4];
    cudaMemcpy2D(got, 2 * sizeof(int), pitched.ptr, pitched.pitch, 2 * sizeof(int), 2, cudaMemcpyDeviceToHost);
    printf("pitched %d %d | %d %d\n", got[0], got[1], got[2], got[3]);

    int cube[8], result[8];
    for (int i = 0; i < 8; i++) cube[i] = 10 + i;
    cudaPitchedPtr slices;
    cudaMalloc3D(&slices, make_cudaExtent(2 * sizeof(int), 2, 2));
    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(cube, 2 * sizeof(int), 2, 2);
    up.dstPtr = slices;
    up.extent = make_cudaExtent(2 * sizeof(int), 2, 2);
    up.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3D(&up);
    cudaMemcpy3DParms down = {};
    down.srcPtr = slices;
    down.dstPtr = make_cudaPitchedPtr(result, 2 * sizeof(int), 2, 2);
    down.extent = up.extent;
    down.kind = cudaMemcpyDeviceToHost;
    cudaMemcpy3DAsync(&down, 0);
    cudaStreamSynchronize(0);
    printf("slices %d %d %d %d %d %d %d %d\n", result[0], result[1], result[2], result[3], result[4], result[5],
           result[6], result[7]);

    in.extent = make_cudaExtent(2, 2, 2);
    printf("depth 2 into an array: %s\n", cudaGetErrorName(cudaMemcpy3D(&in)));
    return 0;
}
