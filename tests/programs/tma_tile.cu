// @arch sm_90a
// @stdout tiles match
// @stdout box of 300 refused: 1
// @exit 0
// @launches 1
// @expect clean
// TMA under exec: the host encodes a tensor map with cuTensorMapEncodeTiled, reached through
// cudaGetDriverEntryPointByVersion, over a 40x100 float tensor whose rows are 112 floats apart (padded).
// The kernel is tests/kernels/bulk_copy/tma_load_wait.cu's: each of 4 blocks loads a 16x32 box at column
// 32b - 8, row 24 (past the left, right and bottom edges: zeros there), waits for the mbarrier phase, and
// copies it out; the host checks every element. The driver refuses a box extent over 256
// (CUDA_ERROR_INVALID_VALUE = 1).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cstdio>
#include "../kernels/bulk_copy/tma_load_wait.cu"  // tile_copy: each block's box, through the map, to `out`

int main()
{
    const int rows = 40, cols = 100, pitch = 112;
    static float host[rows * pitch], out[4 * 512];
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < pitch; c++)
            host[r * pitch + c] = c < cols ? r * 1000 + c : -1;
    float *tensor, *d_out;
    cudaMalloc(&tensor, sizeof host);
    cudaMalloc(&d_out, sizeof out);
    cudaMemcpy(tensor, host, sizeof host, cudaMemcpyHostToDevice);

    PFN_cuTensorMapEncodeTiled_v12000 encode;
    cudaDriverEntryPointQueryResult found;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &found);
    CUtensorMap map;
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {pitch * sizeof(float)};
    cuuint32_t box[2] = {32, 16}, element_strides[2] = {1, 1};
    encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, tensor, dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    tile_copy<<<4, 512>>>(map, d_out, tensor);
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 512; t++) {
            int r = 24 + t / 32, c = 32 * b - 8 + t % 32;
            float want = r < rows && c >= 0 && c < cols ? r * 1000 + c : 0;
            wrong += out[512 * b + t] != want;
        }
    printf(wrong ? "%d elements differ\n" : "tiles match\n", wrong);

    cuuint32_t too_big[2] = {300, 16};
    CUresult refused = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, tensor, dims, strides, too_big, element_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("box of 300 refused: %d\n", (int)refused);
    cudaFree(tensor);
    cudaFree(d_out);
    return 0;
}
