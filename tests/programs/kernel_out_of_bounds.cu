// A kernel that writes one element past its buffer: an out-of-bounds finding at the store, and the
// error a GPU gives the program, which surfaces at the next synchronising call and sticks.
// @stdout launch: no error
// @stdout sync: an illegal memory access was encountered
// @stdout copy: an illegal memory access was encountered
// @exit 1
// @launches 1
// @expect out-of-bounds 12
#include <cstdio>

__global__ void fill(int *out, int n) {
    out[threadIdx.x] = n;
}

int main() {
    int *out;
    cudaMalloc(&out, 31 * sizeof(int));
    fill<<<1, 32>>>(out, 31);
    printf("launch: %s\n", cudaGetErrorString(cudaGetLastError()));
    printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    int host[31];
    printf("copy: %s\n", cudaGetErrorString(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost)));
    return 0;
}
