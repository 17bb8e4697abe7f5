// Kernels a driver-API program links with linked_helpers.cu at run time (cuLinkAddFile, cuLinkAddData): they
// call functions and read a variable that file defines (tests/runtime/test_driver_api.py builds both as
// relocatable device code, -rdc=true). `sum_plain` adds through add_plain, which races (linked_helpers.cu
// line 6); `sum_atomic` adds through add_atomic, which does not.

extern __device__ int offset;
extern __device__ void add_plain(int *total, int value);
extern __device__ void add_atomic(int *total, int value);

extern "C" __global__ void sum_plain(int *total, const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        add_plain(total, in[i] + offset);
}

extern "C" __global__ void sum_atomic(int *total, const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        add_atomic(total, in[i] + offset);
}
