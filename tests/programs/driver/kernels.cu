// Kernels a driver-API program loads as a module (tests/runtime/test_driver_api.py builds this file into a PTX
// file, a cubin and fatbinaries, and gives gpurace exec the program's host code, with or without this file).
// `scale` is race-free; in `total` every thread adds into out[0] without an atomic: a global-memory race at
// line 17 (the read of out[0] and the write back, both at that line).

__device__ int bias = 5;

extern "C" __global__ void scale(int *out, const int *in, int factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * factor + bias;
}

extern "C" __global__ void total(int *out, const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[0] += in[i];
}
