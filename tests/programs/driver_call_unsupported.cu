// A driver call gpurace's libcuda.so.1 does not implement stops the program (exit status 2), naming the
// call and its host line; what the program printed before it is kept.
// @nvcc_flags -lcuda
// @stdout before
// @exit 2
// @expect_error driver_call_unsupported.cu:14: cuMemAllocPitch_v2 (a CUDA driver call) is not supported
#include <cstdio>
#include <cuda.h>

int main() {
    printf("before\n");
    CUdeviceptr p;
    size_t pitch;
    cuMemAllocPitch(&p, &pitch, 64, 4, 4);
    printf("after\n");
    return 0;
}
