// A program of two translation units, each with its own `__constant__ int k` (no -rdc: two variables with one
// name) and its own kernel reading it; each unit sets its k, so each kernel must see its own unit's value.
// @with parts/two_units_kernels.cu
// @stdout 11 22
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

__constant__ int k;

__global__ void read_mine(int *out) { out[0] = k; }

void run_other_unit(int *out);

int main() {
    int *out;
    cudaMallocManaged(&out, 2 * sizeof(int));
    int v = 11;
    cudaMemcpyToSymbol(k, &v, sizeof v);
    read_mine<<<1, 1>>>(out);
    run_other_unit(out + 1);
    cudaDeviceSynchronize();
    printf("%d %d\n", out[0], out[1]);
    cudaFree(out);
    return 0;
}
