// cudaFreeAsync frees in its stream's order: a kernel on another stream that still reads the buffer, with
// no event between the two streams, races with the free (on a GPU the memory may be reused under it).
// The result the program prints is what issuing the work in program order gives.
// @stdout last = 62
// @exit 1
// @launches 1
// @expect data-race 10 25
#include <cstdio>

__global__ void twice(const int *in, int *out) { out[threadIdx.x] = 2 * in[threadIdx.x]; }

int main() {
    const int n = 32;
    int host[n];
    for (int i = 0; i < n; i++) host[i] = i;
    cudaStream_t a, b;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    int *in, *out;
    cudaMallocAsync(&in, sizeof host, a);
    cudaMallocAsync(&out, sizeof host, a);
    cudaMemcpyAsync(in, host, sizeof host, cudaMemcpyHostToDevice, a);
    cudaStreamSynchronize(a);
    twice<<<1, n, 0, a>>>(in, out);
    cudaFreeAsync(in, b);
    cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, a);
    cudaFreeAsync(out, a);
    cudaDeviceSynchronize();
    printf("last = %d\n", host[n - 1]);
    return 0;
}
