// What a program asks of streams and peers on the one simulated device: a stream's flags (as made: 1 for
// cudaStreamNonBlocking, 0 for the default stream), its priority (0: no priorities) and device; the device
// is no peer of itself and there is no device 1, so peer access is refused; a peer copy within device 0
// copies. No findings.
// @stdout flags: 0 1 0
// @stdout priority 0, device 0
// @stdout peer of itself: 0; of device 1: invalid device ordinal
// @stdout enable: invalid device ordinal
// @stdout peer copy: 7 7 7 7
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void fill(int *out, int value) { out[threadIdx.x] = value; }

int main() {
    cudaStream_t plain, non_blocking;
    cudaStreamCreate(&plain);
    cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking);
    unsigned int f0 = 9, f1 = 9, f2 = 9;
    cudaStreamGetFlags(plain, &f0);
    cudaStreamGetFlags(non_blocking, &f1);
    cudaStreamGetFlags(0, &f2);
    printf("flags: %u %u %u\n", f0, f1, f2);
    int priority = 9, device = 9;
    cudaStreamGetPriority(non_blocking, &priority);
    cudaStreamGetDevice(non_blocking, &device);
    printf("priority %d, device %d\n", priority, device);

    int self = 9, other = 9;
    cudaDeviceCanAccessPeer(&self, 0, 0);
    cudaError_t e = cudaDeviceCanAccessPeer(&other, 0, 1);
    printf("peer of itself: %d; of device 1: %s\n", self, cudaGetErrorString(e));
    printf("enable: %s\n", cudaGetErrorString(cudaDeviceEnablePeerAccess(0, 0)));

    int *a, *b, host[4];
    cudaMalloc(&a, sizeof host);
    cudaMalloc(&b, sizeof host);
    fill<<<1, 4, 0, plain>>>(a, 7);
    cudaMemcpyPeerAsync(b, 0, a, 0, sizeof host, plain);
    cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost);
    printf("peer copy: %d %d %d %d\n", host[0], host[1], host[2], host[3]);
    cudaFree(a);
    cudaFree(b);
    cudaStreamDestroy(plain);
    cudaStreamDestroy(non_blocking);
    return 0;
}
