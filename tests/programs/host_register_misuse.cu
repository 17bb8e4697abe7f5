// Registered host memory misused, each answered as NVIDIA's runtime answers it. Registering bytes already
// registered returns cudaErrorHostMemoryAlreadyRegistered (no finding: programs may take it as "done").
// The host reads what a kernel on stream s writes before waiting for it: a data race between the kernel's
// store (line 22) and the read (line 35); gpurace runs the kernel at once, so both reads see its value.
// Unregistering a pointer that was never registered returns cudaErrorHostMemoryNotRegistered and is an
// invalid free (line 39). A kernel that writes one int past the registered range is out of bounds (line 22),
// and the next synchronising call fails with cudaErrorIllegalAddress.
// @stdout again: cudaErrorHostMemoryAlreadyRegistered
// @stdout early 7, late 7
// @stdout never registered: cudaErrorHostMemoryNotRegistered
// @stdout past the end: cudaErrorIllegalAddress
// @exit 1
// @launches 2
// @expect data-race 22 35
// @expect invalid-free 39
// @expect out-of-bounds 22
#include <cstdio>
#include <cstdlib>

__global__ void seven(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 7;
}

int main() {
    const int n = 4096;
    int *host = (int *)malloc((n + 1) * sizeof(int));
    cudaHostRegister(host, n * sizeof(int), cudaHostRegisterDefault);
    printf("again: %s\n", cudaGetErrorName(cudaHostRegister(host + 100, 64, cudaHostRegisterDefault)));
    int *device;
    cudaHostGetDevicePointer(&device, host, 0);
    cudaStream_t s;
    cudaStreamCreate(&s);
    seven<<<n / 256, 256, 0, s>>>(device, n);
    int early = host[2000];
    cudaStreamSynchronize(s);
    printf("early %d, late %d\n", early, host[2000]);
    int other[4];
    cudaError_t never = cudaHostUnregister(other);
    printf("never registered: %s\n", cudaGetErrorName(never));
    seven<<<1, 32>>>(device + n - 16, 17);
    printf("past the end: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
