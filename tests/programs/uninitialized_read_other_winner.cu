// The lane that wins the claim reads the slot of its own warp; the host wrote only slot 0. Under the default
// schedule lane 0 wins and reads slot 0, but when warp 1 claims first (the reverse schedule, which forks from
// the default one's run at the atomicCAS) lane 32 reads slot 1, which nothing wrote: an uninitialised read
// that only a forked schedule shows, reported with the others. The program prints the default schedule's
// result.
// @stdout out = 7
// @exit 1
// @launches 1
// @expect uninitialized-read 16
#include <cstdio>

__global__ void claim(int *owner, const int *slots, int *out) {
    int warp = threadIdx.x / 32;
    if (atomicCAS(owner, 0, 1) == 0)
        out[0] =
            slots[warp];
}

int main() {
    int *owner, *slots, *out;
    int seven = 7, result = 0;
    cudaMalloc(&owner, sizeof(int));
    cudaMalloc(&slots, 2 * sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaMemset(owner, 0, sizeof(int));
    cudaMemset(out, 0, sizeof(int));
    cudaMemcpy(slots, &seven, sizeof(int), cudaMemcpyHostToDevice);
    claim<<<1, 64>>>(owner, slots, out);
    cudaMemcpy(&result, out, sizeof(int), cudaMemcpyDeviceToHost);
    printf("out = %d\n", result);
    cudaFree(owner);
    cudaFree(slots);
    cudaFree(out);
    return 0;
}
