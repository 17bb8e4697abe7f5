// @kernel wmma_gemm(const __half*, const __half*, float*)
// @shared wmma_gemm 2048
// @barriers wmma_gemm 18
// @launch --arch compute_80 --grid 1 --block 128 --arg buf:1024:rand --arg buf:1024:rand --arg buf:1024
// @expect clean
// C = A * B for 32x32 matrices with the wmma API: A (row-major) is staged in shared memory, B (column-major)
// is read from global memory, and each of the block's four warps computes one 16x16 tile of C (row-major)
// in two 16x16x16 steps. tests/sim/test_tensor_core.py checks C against NumPy.
#include <mma.h>
using namespace nvcuda;

#define N 32

__global__ void wmma_gemm(const __half* A, const __half* B, float* C)
{
    __shared__ __align__(32) __half As[N * N];
    for (int i = threadIdx.x; i < N * N; i += blockDim.x) As[i] = A[i];
    __syncthreads();
    int warp = threadIdx.x / 32;
    int tm = (warp / 2) * 16, tn = (warp % 2) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    for (int k = 0; k < N; k += 16) {
        wmma::load_matrix_sync(a, As + tm * N + k, N);
        wmma::load_matrix_sync(b, B + tn * N + k, N);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + tm * N + tn, c, N, wmma::mem_row_major);
}
