// CUDA Dynamic Parallelism: nesting deeper than CUDA allows. `dive` launches itself one level deeper each time;
// the host's grid is depth 0, and a grid at depth 24 cannot launch: its launch fails with
// cudaErrorLaunchMaxDepthExceeded (65), which cudaGetLastError returns in device code.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout deepest: 24 error: 65
// @exit 0
// @launches 25
// @expect clean
#include <cstdio>

__global__ void dive(int depth, int *deepest, int *error) {
    *deepest = depth;
    dive<<<1, 1>>>(depth + 1, deepest, error);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        *error = e;
}

int main() {
    int *deepest, *error;
    cudaMalloc(&deepest, sizeof(int));
    cudaMalloc(&error, sizeof(int));
    cudaMemset(error, 0, sizeof(int));
    dive<<<1, 1>>>(0, deepest, error);
    int d = -1, e = -1;
    cudaMemcpy(&d, deepest, sizeof d, cudaMemcpyDeviceToHost);
    cudaMemcpy(&e, error, sizeof e, cudaMemcpyDeviceToHost);
    printf("deepest: %d error: %d\n", d, e);
    return 0;
}
