// @arch sm_90a
// @exit 2
// @expect clean
// @expect_error cuTensorMapEncodeTiled: tensor maps with swizzle 4 (a 128B swizzle of 32- or 64-byte atoms) are not supported
// A tensor map with a 128-byte swizzle of 32-byte atoms (CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B): valid CUDA,
// which the simulator does not follow, so the program is stopped at the call rather than run on a map it
// would misread.
#include <cuda.h>
#include <cudaTypedefs.h>

int main()
{
    float *tensor;
    cudaMalloc(&tensor, 64 * 64 * sizeof(float));
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode, cudaEnableDefault, nullptr);
    CUtensorMap map;
    cuuint64_t dims[2] = {64, 64}, strides[1] = {64 * sizeof(float)};
    cuuint32_t box[2] = {32, 32}, element_strides[2] = {1, 1};
    encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, tensor, dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    cudaFree(tensor);
    return 0;
}
