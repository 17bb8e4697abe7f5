// @arch sm_90a
// @stdout tiles match
// @exit 0
// @launches 1
// @expect clean
// A kernel that edits its tensor map: tests/kernels/tma/replace_in_shared.cu copies the map it is given into
// shared memory, points it at `other` with an extent of 56 columns and rows 64 floats apart, copies it to
// global memory with tensormap.cp_fenceproxy and loads a 16x32 box at column 40, row 2 through it. The host
// checks every element: other's where the box lies inside the 40x56 tensor the edited map describes, zeros
// past its right edge.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cstdio>
#include "../kernels/tma/replace_in_shared.cu"  // retarget: the box through the edited map, to `out`

int main()
{
    const int rows = 40, cols = 100, pitch = 64;
    static float host[rows * cols], host_other[rows * pitch], out[512];
    for (int i = 0; i < rows * cols; i++)
        host[i] = -1;
    for (int i = 0; i < rows * pitch; i++)
        host_other[i] = i;
    float *tensor, *other, *d_out;
    CUtensorMap* gmap;
    cudaMalloc(&tensor, sizeof host);
    cudaMalloc(&other, sizeof host_other);
    cudaMalloc(&d_out, sizeof out);
    cudaMalloc(&gmap, sizeof(CUtensorMap));
    cudaMemcpy(tensor, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemcpy(other, host_other, sizeof host_other, cudaMemcpyHostToDevice);

    PFN_cuTensorMapEncodeTiled_v12000 encode;
    cudaDriverEntryPointQueryResult found;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &found);
    CUtensorMap map;
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols * sizeof(float)};
    cuuint32_t box[2] = {32, 16}, element_strides[2] = {1, 1};
    encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, tensor, dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    retarget<<<1, 512>>>(map, gmap, tensor, other, d_out);
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int t = 0; t < 512; t++) {
        int r = 2 + t / 32, c = 40 + t % 32;
        float want = c < 56 ? r * pitch + c : 0;
        wrong += out[t] != want;
    }
    printf(wrong ? "%d elements differ\n" : "tiles match\n", wrong);
    cudaFree(tensor);
    cudaFree(other);
    cudaFree(d_out);
    cudaFree(gmap);
    return 0;
}
