// @nvcc_flags -std=c++17 --expt-relaxed-constexpr -ftz=true -lcuda
// @stdout scaled 0 (flushed to zero), twice 42
// @exit 0
// @launches 1
// @expect clean
// The program's own nvcc options shape its device code as well as its host code: the kernel calls a constexpr
// host function (which only --expt-relaxed-constexpr allows), and -ftz=true flushes the denormal product to
// zero, as a GPU given the same build does; without the flag it would be 2^-127. The linker's -lcuda is not
// a device option and leaves the device code alone.
#include <cstdio>

constexpr int twice(int x) { return 2 * x; }

__global__ void scale(const float *in, float *out, int *doubled) {
    out[0] = in[0] * 0.5f;
    doubled[0] = twice(21);
}

int main() {
    float tiny = 0x1p-126f, scaled;  // the smallest normal float: half of it is denormal
    int doubled;
    float *in, *out;
    int *d;
    cudaMalloc(&in, sizeof(float));
    cudaMalloc(&out, sizeof(float));
    cudaMalloc(&d, sizeof(int));
    cudaMemcpy(in, &tiny, sizeof(float), cudaMemcpyHostToDevice);
    scale<<<1, 1>>>(in, out, d);
    cudaMemcpy(&scaled, out, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&doubled, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("scaled %g (%s), twice %d\n", scaled, scaled == 0.0f ? "flushed to zero" : "denormal", doubled);
    cudaFree(in);
    cudaFree(out);
    cudaFree(d);
    return 0;
}
