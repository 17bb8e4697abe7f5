// Host code dereferences a cudaMalloc pointer (line 15): a GPU's host cannot reach device memory, and the
// program dies there with a segmentation fault (status 139: 128 + SIGSEGV), before its last line. gpurace
// reports the access and lets the program crash the same way.
// @stdout before
// @exit 1
// @expect invalid-host-access 15
#include <cstdio>

int main() {
    int *d;
    cudaMalloc(&d, 64 * sizeof(int));
    cudaMemset(d, 0, 64 * sizeof(int));
    printf("before\n");
    fflush(stdout);
    d[2] = 5;
    printf("after %d\n", d[2]);
    cudaFree(d);
    return 0;
}
