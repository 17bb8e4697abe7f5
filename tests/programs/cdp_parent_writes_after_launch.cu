// CUDA Dynamic Parallelism: the parent's write after a launch races with the child. Every thread of the parent
// fills its element and a __syncthreads() orders the whole block's writes before thread 0 launches `total`, so
// the child's reads of them are ordered. But thread 0 then resets data[0] while the child may still be reading
// it: a data race between the parent's store (line 25) and the child's read (line 16). On this run the child
// reads 0 for data[0] (it runs after its parent here): 2 + 3 + ... + 32.
// @nvcc_flags -rdc=true -lcudadevrt
// @stdout total: 527
// @exit 1
// @launches 2
// @expect data-race 16 25
#include <cstdio>

__global__ void total(const int *data, int *out) {
    int sum = 0;
    for (int i = 0; i < 32; i++)
        sum += data[i];
    *out = sum;
}

__global__ void parent(int *data, int *out) {
    data[threadIdx.x] = threadIdx.x + 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        total<<<1, 1>>>(data, out);
        data[0] = 0;
    }
}

int main() {
    int *data, *out;
    cudaMalloc(&data, 32 * sizeof(int));
    cudaMalloc(&out, sizeof(int));
    parent<<<1, 32>>>(data, out);
    int result = 0;
    cudaMemcpy(&result, out, sizeof result, cudaMemcpyDeviceToHost);
    printf("total: %d\n", result);
    return 0;
}
