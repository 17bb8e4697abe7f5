// cudaMemset3D over pitched memory from cudaMalloc3D: every slice's rows get the value, the pitch padding does
// not; cudaMemset3DAsync of a smaller extent on a stream overwrites the first rows of the first slices only.
// A kernel sums what it sees. Ordered by the stream and the synchronisations: clean.
// @stdout pitch 512, sum after memset3D 840, after async 808
// @stdout padding untouched: 1
// @exit 0
// @launches 2
// @expect clean
#include <cstdio>

// Sum of the 10 x 4 x 3 extent's bytes, and whether the byte past each row (padding) is still 0.
__global__ void sum(const unsigned char *p, size_t pitch, int *out) {
    int total = 0, padding = 1;
    for (int z = 0; z < 3; ++z)
        for (int y = 0; y < 4; ++y) {
            const unsigned char *row = p + (z * 4 + y) * pitch;
            for (int x = 0; x < 10; ++x) total += row[x];
            padding &= row[10] == 0;
        }
    out[0] = total, out[1] = padding;
}

int main() {
    cudaExtent extent = make_cudaExtent(10, 4, 3);
    cudaPitchedPtr p;
    cudaMalloc3D(&p, extent);
    cudaMemset(p.ptr, 0, p.pitch * 4 * 3);
    int *out, h[2], first;
    cudaMalloc(&out, sizeof h);
    cudaMemset3D(p, 7, extent);
    sum<<<1, 1>>>((const unsigned char *)p.ptr, p.pitch, out);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    first = h[0];

    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemset3DAsync(p, 5, make_cudaExtent(4, 2, 2), s);  // 4 x 2 bytes of 2 slices: 16 bytes from 7 to 5
    sum<<<1, 1, 0, s>>>((const unsigned char *)p.ptr, p.pitch, out);
    cudaMemcpyAsync(h, out, sizeof h, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    printf("pitch %zu, sum after memset3D %d, after async %d\n", p.pitch, first, h[0]);
    printf("padding untouched: %d\n", h[1]);
    cudaStreamDestroy(s);
    cudaFree(out);
    cudaFree(p.ptr);
    return 0;
}
