// @kernel block_sum(const int*, int*, int)
// @shared block_sum 1024
// @barriers block_sum 24
// @atomics block_sum 31:add.gpu
// @launch --grid 4 --block 256 --arg buf:1024:iota --arg buf:1 --arg 1024
// @expect data-race shared 28 28
// A whole program: it fills an array with 0, 1, 2, ..., sums it on the GPU
// and checks the sum itself. The kernel's tree reduction lacks the
// __syncthreads() between its steps, so a thread can read partial[tid + s]
// before the thread that owns it has added its own pair: a data race on
// shared memory. `gpurace exec examples/sum_app.cu` runs the program (its
// output passes through) and reports the race at line 28.
#include <cstdio>
#include <cstdlib>

#define BLOCK 256

__global__ void block_sum(const int* in, int* out, int n)
{
    __shared__ int partial[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    partial[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            // missing: __syncthreads() after this update
            partial[tid] += partial[tid + s];
    }
    if (tid == 0)
        atomicAdd(out, partial[0]);
}

int main(int argc, char** argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int* host = (int*)malloc(n * sizeof(int));
    long long expected = 0;
    for (int i = 0; i < n; i++) {
        host[i] = i;
        expected += i;
    }
    int *in, *out;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaMemcpy(in, host, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(out, 0, sizeof(int));
    block_sum<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, out, n);
    int sum = 0;
    cudaMemcpy(&sum, out, sizeof(int), cudaMemcpyDeviceToHost);
    printf("sum of 0..%d = %d (expected %lld): %s\n", n - 1, sum, expected, sum == expected ? "PASSED" : "FAILED");
    cudaFree(in);
    cudaFree(out);
    free(host);
    return sum == expected ? 0 : 1;
}
