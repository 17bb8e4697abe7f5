// Run with the leak check: three buffers allocated on one line, one freed; the two left are one finding
// (counted twice) at the allocating line.
// @leak_check
// @exit 1
// @expect leak 10
#include <cstdio>

int main() {
    int *buffers[3];
    for (int i = 0; i < 3; i++) cudaMalloc(&buffers[i], 100 * sizeof(int));
    cudaFree(buffers[0]);
    return 0;
}
