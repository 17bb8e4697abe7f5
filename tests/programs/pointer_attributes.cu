// cudaPointerGetAttributes on each kind of memory: cudaMalloc'd (device, no host pointer), managed (both
// pointers the same), cudaMallocHost'd (host, page-locked), registered host memory (host; the device pointer is
// the one cudaHostGetDevicePointer gives), a __device__ variable, the program's own unregistered memory
// (cudaMemoryTypeUnregistered, device -2), and a freed device pointer (cudaErrorInvalidValue).
// @stdout device: type 2, device 0, devicePointer ok, hostPointer null
// @stdout device+16: type 2, devicePointer ok
// @stdout managed: type 3, device 0, devicePointer ok, hostPointer ok
// @stdout pinned: type 1, device 0, devicePointer ok, hostPointer ok
// @stdout registered: type 1, devicePointer is cudaHostGetDevicePointer's 1, hostPointer ok
// @stdout variable: type 2, devicePointer ok
// @stdout unregistered: type 0, device -2, devicePointer null, hostPointer null
// @stdout freed: cudaErrorInvalidValue
// @exit 0
// @launches 0
// @expect clean
#include <cstdio>
#include <cstdlib>

__device__ int counter[4];

static void show(const char *what, const void *p, const void *expect_device, const void *expect_host) {
    cudaPointerAttributes a;
    cudaError_t status = cudaPointerGetAttributes(&a, p);
    if (status != cudaSuccess) {
        printf("%s: %s\n", what, cudaGetErrorName(status));
        return;
    }
    printf("%s: type %d, device %d, devicePointer %s, hostPointer %s\n", what, (int)a.type, a.device,
           a.devicePointer == expect_device ? (expect_device ? "ok" : "null") : "WRONG",
           a.hostPointer == expect_host ? (expect_host ? "ok" : "null") : "WRONG");
}

int main() {
    char *d, *m, *h, *variable;
    cudaMalloc(&d, 64);
    cudaMallocManaged(&m, 64);
    cudaMallocHost(&h, 64);
    cudaGetSymbolAddress((void **)&variable, counter);
    char *mine = (char *)aligned_alloc(4096, 8192);
    cudaHostRegister(mine, 8192, cudaHostRegisterDefault);
    void *mine_device = nullptr;
    cudaHostGetDevicePointer(&mine_device, mine, 0);

    show("device", d, d, nullptr);
    cudaPointerAttributes a;
    cudaPointerGetAttributes(&a, d + 16);
    printf("device+16: type %d, devicePointer %s\n", (int)a.type, a.devicePointer == d + 16 ? "ok" : "WRONG");
    show("managed", m, m, m);
    show("pinned", h, h, h);
    cudaPointerGetAttributes(&a, mine + 8);
    printf("registered: type %d, devicePointer is cudaHostGetDevicePointer's %d, hostPointer %s\n", (int)a.type,
           a.devicePointer == (char *)mine_device + 8, a.hostPointer == mine + 8 ? "ok" : "WRONG");
    cudaPointerGetAttributes(&a, variable);
    printf("variable: type %d, devicePointer %s\n", (int)a.type, a.devicePointer == variable ? "ok" : "WRONG");
    int local = 0;
    show("unregistered", &local, nullptr, nullptr);
    cudaFree(d);
    show("freed", d, nullptr, nullptr);
    cudaGetLastError();

    cudaHostUnregister(mine);
    free(mine);
    cudaFreeHost(h);
    cudaFree(m);
    return 0;
}
