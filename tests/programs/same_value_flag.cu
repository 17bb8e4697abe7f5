// @stdout found 1
// @exit 1
// @launches 1
// @expect data-race 13 13
// Every thread that sees a positive element raises one flag in global
// memory: a data race between stores of the same value (a warning), which
// `--benign-same-value` drops (tests/runtime/test_same_value_exec.py).
#include <cstdio>

__global__ void any_positive(const int* in, int* found)
{
    if (in[blockIdx.x * blockDim.x + threadIdx.x] > 0)
        *found = 1;
}

int main()
{
    int host[128];
    for (int i = 0; i < 128; ++i)
        host[i] = i;
    int *in, *found;
    cudaMalloc(&in, sizeof host);
    cudaMalloc(&found, sizeof(int));
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemset(found, 0, sizeof(int));
    any_positive<<<2, 64>>>(in, found);
    int result = 0;
    cudaMemcpy(&result, found, sizeof result, cudaMemcpyDeviceToHost);
    printf("found %d\n", result);
    cudaFree(in);
    cudaFree(found);
    return 0;
}
