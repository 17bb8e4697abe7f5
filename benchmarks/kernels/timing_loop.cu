// A program that times a kernel the way benchmarks do, for benchmarks/bench_exec.py: a tiled matrix product
// of two 128x128 matrices (16,384 threads in blocks of 16x16) launched LAUNCHES times (the first argument,
// default 100) on the same input, then checked on the host. Every launch after the first repeats it exactly
// and is replayed (README "Repeated launches").
#include <cstdio>
#include <cstdlib>

#define N 128
#define TILE 16

__global__ void matmul(float *c, const float *a, const float *b)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0;
    for (int t = 0; t < N; t += TILE) {
        as[threadIdx.y][threadIdx.x] = a[row * N + t + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * N + col] = sum;
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 100;
    static float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)(i % 7);
        b[i] = (float)(i % 5);
    }
    float *da, *db, *dc;
    cudaMalloc(&da, sizeof a);
    cudaMalloc(&db, sizeof b);
    cudaMalloc(&dc, sizeof c);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    for (int k = 0; k < launches; k++)
        matmul<<<dim3(N / TILE, N / TILE), dim3(TILE, TILE)>>>(dc, da, db);
    cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int k = 0; k < N; k++)
                want += a[i * N + k] * b[k * N + j];
            wrong += c[i * N + j] != want;
        }
    printf("%d launches, %d wrong\n", launches, wrong);
    return 0;
}
