// Launches that repeat an earlier one exactly are replayed, not simulated again (README "Repeated launches");
// the first launch of a configuration is never remembered, the second is. A timing loop of ten identical
// launches replays eight; after the input changes the next launch runs, and the one after it (same input,
// output cleared by the host) replays and writes the output again; a kernel that updates its buffer in
// place on changing data never repeats (repeated_in_place.cu: on the same data it does); a kernel that
// prints runs every time; a launch reading managed memory the host changed runs again, and the next one
// replays it; so does one reading a __constant__ the host changed. The racy `publish` (every thread stores
// a different value into one word) is replayed twice: one finding, whose count is four launches'
// (test_programs.py).
// @stdout after 10: 2 510
// @stdout after input change: 200 510
// @stdout in place: 3
// @stdout hello 7
// @stdout hello 7
// @stdout managed: 3 15 15
// @stdout constant: 2
// @exit 1
// @launches 28
// @replayed 13
// @expect data-race 34
#include <cstdio>

__global__ void scale(float *out, const float *in, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * factor;
}

__global__ void bump(int *x) { x[threadIdx.x] += 1; }

__global__ void publish(const int *x, int *total) {
    int sum = 0;
    for (int i = 0; i < 32; i++)
        sum += x[i];
    total[0] = sum + threadIdx.x;
}

__global__ void hello(int round) {
    if (threadIdx.x == 0)
        printf("hello %d\n", round);
}

__constant__ float bias;

__global__ void add_bias(float *out) { out[threadIdx.x] = bias; }

int main() {
    const int n = 256;
    float host[n];
    for (int i = 0; i < n; i++)
        host[i] = i;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    for (int r = 0; r < 10; r++)
        scale<<<2, 128>>>(out, in, 2.0f);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    printf("after 10: %g %g\n", host[1], host[255]);

    for (int i = 0; i < n; i++)
        host[i] = i;
    host[1] = 100;
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    scale<<<2, 128>>>(out, in, 2.0f);
    cudaMemset(out, 0, sizeof host);
    scale<<<2, 128>>>(out, in, 2.0f);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    printf("after input change: %g %g\n", host[1], host[255]);

    int *x, *total, counts[32];
    cudaMalloc(&x, sizeof counts);
    cudaMalloc(&total, sizeof(int));
    cudaMemset(x, 0, sizeof counts);
    for (int r = 0; r < 3; r++)
        bump<<<1, 32>>>(x);
    cudaMemcpy(counts, x, sizeof counts, cudaMemcpyDeviceToHost);
    printf("in place: %d\n", counts[5]);
    for (int r = 0; r < 4; r++)
        publish<<<1, 32>>>(x, total);

    hello<<<1, 32>>>(7);
    hello<<<1, 32>>>(7);

    float *managed;
    cudaMallocManaged(&managed, n * sizeof(float));
    for (int i = 0; i < n; i++)
        managed[i] = 1;
    scale<<<2, 128>>>(out, managed, 3.0f);
    cudaDeviceSynchronize();
    managed[0] = 5;
    scale<<<2, 128>>>(out, managed, 3.0f);
    scale<<<2, 128>>>(out, managed, 3.0f);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    printf("managed: %g %g %g\n", host[1], host[0], managed[0] * 3);

    float value = 1;
    cudaMemcpyToSymbol(bias, &value, sizeof value);
    add_bias<<<1, 32>>>(out);
    add_bias<<<1, 32>>>(out);
    value = 2;
    cudaMemcpyToSymbol(bias, &value, sizeof value);
    add_bias<<<1, 32>>>(out);
    add_bias<<<1, 32>>>(out);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    printf("constant: %g\n", host[0]);

    cudaFree(in);
    cudaFree(out);
    cudaFree(x);
    cudaFree(total);
    cudaFree(managed);
    return 0;
}
