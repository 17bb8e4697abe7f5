// A launch a GPU refuses: 2048 threads per block. The launch returns cudaErrorInvalidConfiguration, which
// the program prints, and gpurace reports an invalid-launch finding at the launch's line. The program
// then launches correctly and goes on.
// @stdout launch: invalid configuration argument
// @stdout after: no error, value 5
// @exit 1
// @launches 2
// @expect invalid-launch 18
#include <cstdio>

__global__ void set(int *out, int value) {
    out[threadIdx.x] = value;
}

int main() {
    int *out;
    cudaMalloc(&out, 2048 * sizeof(int));
    set<<<1, 2048>>>(out, 4);
    printf("launch: %s\n", cudaGetErrorString(cudaGetLastError()));
    set<<<1, 32>>>(out, 5);
    cudaError_t err = cudaDeviceSynchronize();
    int value = 0;
    cudaMemcpy(&value, out + 7, sizeof(int), cudaMemcpyDeviceToHost);
    printf("after: %s, value %d\n", cudaGetErrorString(err), value);
    cudaFree(out);
    return 0;
}
