// @kernel wmma_gemm_unsynced(const __half*, const __half*, float*)
// @shared wmma_gemm_unsynced 2048
// @launch --arch compute_80 --grid 1 --block 128 --arg buf:1024:rand --arg buf:1024:rand --arg buf:1024
// @expect data-race shared 15 23
// wmma_gemm.cu without the __syncthreads() after the block stages A in shared memory: a warp's
// wmma::load_matrix_sync reads elements of As that other warps' threads store.
#include <mma.h>
using namespace nvcuda;

#define N 32

__global__ void wmma_gemm_unsynced(const __half* A, const __half* B, float* C)
{
    __shared__ __align__(32) __half As[N * N];
    for (int i = threadIdx.x; i < N * N; i += blockDim.x) As[i] = A[i];
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
