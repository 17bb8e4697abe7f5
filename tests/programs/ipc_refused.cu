// Interprocess communication cannot be simulated (each process gpurace runs has a device of its own): the
// first cudaIpc* call stops the program (exit status 2), naming the call, its line and why.
// @stdout allocated
// @exit 2
// @expect_error ipc_refused.cu:13: cudaIpcGetMemHandle (sharing memory or events with another process: each process gpurace runs has a simulated device of its own) is not supported
#include <cstdio>

int main() {
    int *d;
    cudaMalloc(&d, 64);
    printf("allocated\n");
    cudaIpcMemHandle_t handle;
    cudaIpcGetMemHandle(&handle, d);
    printf("after\n");
    return 0;
}
