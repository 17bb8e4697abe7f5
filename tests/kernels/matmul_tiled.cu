// @kernel matmul(const float*, const float*, float*, int)
// @shared matmul 2048
// @barriers matmul 19 23
// @launch --grid 2,2 --block 16,16 --arg buf:1024:iota --arg buf:1024:iota --arg buf:1024 --arg 32
// @expect clean
// Tiled matrix multiply C = A * B for square matrices of size n (a multiple of 16).
#define T 16

__global__ void matmul(const float* A, const float* B, float* C, int n)
{
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int row = blockIdx.y * T + threadIdx.y;
    int col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += T) {
        As[threadIdx.y][threadIdx.x] = A[row * n + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
