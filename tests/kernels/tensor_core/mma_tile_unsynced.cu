// @kernel mma_tile_unsynced(const __half*, const __half*, float*)
// @shared mma_tile_unsynced 1536
// @launch --arch compute_80 --grid 1 --block 64 --arg buf:256:rand --arg buf:256:rand --arg buf:256
// @expect data-race shared 20 26
// @expect data-race shared 21 28
// mma_tile.cu without the __syncthreads() between the block's copy of the tiles into shared memory and the
// ldmatrix loads of them: a warp's ldmatrix reads rows that the other warp's threads may not have stored yet.
#include <cuda_fp16.h>

#define LD 24

__global__ void mma_tile_unsynced(const __half* A, const __half* B, float* C)
{
    __shared__ __align__(16) __half As[16][LD];
    __shared__ __align__(16) __half Bs[16][LD];
    int tid = threadIdx.x;
    int lane = tid % 32;
    int n0 = (tid / 32) * 8;
    for (int i = tid; i < 256; i += 64) {
        As[i / 16][i % 16] = A[i];
        Bs[i / 16][i % 16] = B[i];
    }
    unsigned a[4], b[2];
    unsigned a_row = (unsigned)__cvta_generic_to_shared(&As[lane % 16][(lane / 16) * 8]);
    unsigned b_row = (unsigned)__cvta_generic_to_shared(&Bs[lane % 16][n0]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(a_row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b[0]), "=r"(b[1]) : "r"(b_row));
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    int g = lane / 4, t = lane % 4;
    C[g * 16 + n0 + 2 * t] = d[0];
    C[g * 16 + n0 + 2 * t + 1] = d[1];
    C[(g + 8) * 16 + n0 + 2 * t] = d[2];
    C[(g + 8) * 16 + n0 + 2 * t + 1] = d[3];
}
