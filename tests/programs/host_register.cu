// Host memory the program allocated itself, registered for the device: two malloc'd buffers of 3000 ints
// (12000 bytes: whole pages, and bytes in pages they share with malloc's own data) are registered, a kernel
// reads one and writes the other through the pointers cudaHostGetDevicePointer gives, and the host reads the
// results in place after cudaDeviceSynchronize, and still has them after cudaHostUnregister. With unified
// addressing registered memory is mapped: cudaHostGetFlags reports cudaHostRegisterMapped (2). Then an array
// on the stack is registered and written by a kernel, and keeps its values after cudaDeviceReset, which
// ends every registration.
// @stdout registered: cudaSuccess cudaSuccess
// @stdout flags 2
// @stdout out[0] = 1, out[2999] = 5999, 0 wrong
// @stdout after unregister: out[1234] = 2469
// @stdout stack after reset: local[0] = 0, local[63] = 63
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>
#include <cstdlib>

__global__ void twice_plus_one(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2 * in[i] + 1;
}

__global__ void iota(int *x) { x[threadIdx.x] = threadIdx.x; }

int main() {
    const int n = 3000;
    int *in = (int *)malloc(n * sizeof(int));
    int *out = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        in[i] = i;
        out[i] = -1;
    }
    cudaError_t a = cudaHostRegister(in, n * sizeof(int), cudaHostRegisterDefault);
    cudaError_t b = cudaHostRegister(out, n * sizeof(int), cudaHostRegisterMapped);
    printf("registered: %s %s\n", cudaGetErrorName(a), cudaGetErrorName(b));
    unsigned flags = 0;
    cudaHostGetFlags(&flags, out);
    printf("flags %u\n", flags);
    int *d_in, *d_out;
    cudaHostGetDevicePointer(&d_in, in, 0);
    cudaHostGetDevicePointer(&d_out, out, 0);
    twice_plus_one<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
    cudaDeviceSynchronize();
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += out[i] != 2 * i + 1;
    printf("out[0] = %d, out[%d] = %d, %d wrong\n", out[0], n - 1, out[n - 1], wrong);
    cudaHostUnregister(in);
    cudaHostUnregister(out);
    printf("after unregister: out[1234] = %d\n", out[1234]);
    free(in);
    free(out);
    int local[64] = {0};
    cudaHostRegister(local, sizeof local, cudaHostRegisterPortable);
    int *d_local;
    cudaHostGetDevicePointer(&d_local, local, 0);
    iota<<<1, 64>>>(d_local);
    cudaDeviceReset();
    printf("stack after reset: local[0] = %d, local[63] = %d\n", local[0], local[63]);
    return 0;
}
