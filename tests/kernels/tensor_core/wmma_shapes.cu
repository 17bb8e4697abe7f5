// @kernel wmma_m32n8k16(const __half*, const __half*, float*)
// @kernel wmma_m8n32k16_bf16(const __nv_bfloat16*, const __nv_bfloat16*, float*)
// @kernel wmma_s8_saturating(const signed char*, const signed char*, int*)
// @kernel wmma_f16_accumulate(const __half*, const __half*, __half*)
// @warpsyncs wmma_f16_accumulate 64
// @launch --arch compute_80 --kernel wmma_m32n8k16 --grid 1 --block 32 --arg buf:512:rand --arg buf:128:rand --arg buf:256
// @expect clean
// One warp, one wmma product per kernel, for the other shapes and types the simulator runs; each kernel
// loads its operands in a different mix of row- and column-major layouts. tests/sim/test_tensor_core.py
// checks every result against NumPy.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// C (32x8, column-major) = A (32x16, row-major) * B (16x8, row-major)
__global__ void wmma_m32n8k16(const __half* A, const __half* B, float* C)
{
    wmma::fragment<wmma::matrix_a, 32, 8, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 32, 8, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 8);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(C, c, 32, wmma::mem_col_major);
}

// C (8x32, row-major) = A (8x16, row-major) * B (16x32, column-major)
__global__ void wmma_m8n32k16_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C)
{
    wmma::fragment<wmma::matrix_a, 8, 32, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 8, 32, 16, __nv_bfloat16, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 8, 32, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(C, c, 32, wmma::mem_row_major);
}

// C (16x16, row-major) = A (row-major) * B (column-major) + C, saturating to the int range
__global__ void wmma_s8_saturating(const signed char* A, const signed char* B, int* C)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> c;
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
    wmma::mma_sync(c, a, b, c, true);
    wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
}

// C (16x16 half, read column-major, written row-major) = A (column-major) * B (row-major) + C
__global__ void wmma_f16_accumulate(const __half* A, const __half* B, __half* C)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> c;
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::load_matrix_sync(c, C, 16, wmma::mem_col_major);
    wmma::mma_sync(c, a, b, c);
    __syncwarp();
    wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
}
