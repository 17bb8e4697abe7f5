// @launch --grid 3,2 --block 16,16 --arg buf:1536:iota --arg buf:2304:iota --arg buf:1536 --arg 32 --arg 48 --arg 48
// @expect clean
// C[M x N] = A[M x K] * B[K x N] with 16x16 shared tiles (M = 32, K = 48, N = 48).
#define T 16
__global__ void matmul(const float* A, const float* B, float* C, int M, int K, int N)
{
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int row = blockIdx.y * T + threadIdx.y;
    int col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K / T; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * K + t * T + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * T + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < T; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
