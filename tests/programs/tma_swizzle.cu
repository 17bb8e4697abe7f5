// @arch sm_90a
// @stdout swizzled reads match
// @stdout store matches
// @stdout 64-byte swizzle of 128-byte rows refused: 1
// @exit 0
// @launches 1
// @expect clean
// TMA with a 128-byte swizzle under exec: the host encodes two maps over a 64x32 float tensor with
// CU_TENSOR_MAP_SWIZZLE_128B, and the kernel of tests/kernels/bulk_copy/tma_swizzle_round_trip.cu loads each
// block's 16 rows through one (its threads read their elements at the swizzled offsets) and stores the tile
// back through the other. The driver refuses a 64-byte swizzle of 128-byte box rows
// (CUDA_ERROR_INVALID_VALUE = 1).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cstdio>
#include "../kernels/bulk_copy/tma_swizzle_round_trip.cu"

int main()
{
    static float host[64 * 32], plain[64 * 32], out[64 * 32];
    for (int i = 0; i < 64 * 32; i++)
        host[i] = i * 0.5f;
    float *d_in, *d_plain, *d_out;
    cudaMalloc(&d_in, sizeof host);
    cudaMalloc(&d_plain, sizeof plain);
    cudaMalloc(&d_out, sizeof out);
    cudaMemcpy(d_in, host, sizeof host, cudaMemcpyHostToDevice);

    PFN_cuTensorMapEncodeTiled_v12000 encode;
    cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode, cudaEnableDefault, nullptr);
    CUtensorMap load_map, store_map;
    cuuint64_t dims[2] = {32, 64}, strides[1] = {32 * sizeof(float)};
    cuuint32_t box[2] = {32, 16}, element_strides[2] = {1, 1};
    encode(&load_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_in, dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    encode(&store_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_out, dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    swizzle_round_trip<<<4, 512>>>(load_map, store_map, d_plain, d_in, d_out);
    cudaMemcpy(plain, d_plain, sizeof plain, cudaMemcpyDeviceToHost);
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    int wrong_reads = 0, wrong_store = 0;
    for (int i = 0; i < 64 * 32; i++) {
        wrong_reads += plain[i] != host[i];
        wrong_store += out[i] != host[i];
    }
    printf(wrong_reads ? "%d swizzled reads differ\n" : "swizzled reads match\n", wrong_reads);
    printf(wrong_store ? "%d stored elements differ\n" : "store matches\n", wrong_store);

    CUresult refused = encode(&load_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_in, dims, strides, box, element_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("64-byte swizzle of 128-byte rows refused: %d\n", (int)refused);
    cudaFree(d_in);
    cudaFree(d_plain);
    cudaFree(d_out);
    return 0;
}
