// A program in the style of the CUDA samples' stream demos, for benchmarks/bench_exec.py: large copies, several
// streams, many launches. `add` adds the int at `c` (C) to every int of an array of N ints (the first argument, default 1 << 22)
// ITERATIONS times; the program runs it on the whole array REPS times, each time followed by a copy of the whole
// array to page-locked host memory, then REPS times split over STREAMS streams, each stream launching on its own
// quarter and copying that quarter back asynchronously. It checks every int and prints PASS or FAIL.
#include <cstdio>
#include <cstdlib>

#define STREAMS 4
#define REPS 4
#define ITERATIONS 5
#define C 3
#define BLOCK 512

__global__ void add(int *a, const int *c, int iterations)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < iterations; k++)
        a[i] += *c;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 22;
    size_t bytes = (size_t)n * sizeof(int);
    int *host, *dev, *c, value = C;
    cudaMallocHost(&host, bytes);
    cudaMalloc(&dev, bytes);
    cudaMalloc(&c, sizeof(int));
    cudaMemset(dev, 0, bytes);
    cudaMemcpy(c, &value, sizeof(int), cudaMemcpyHostToDevice);
    cudaStream_t streams[STREAMS];
    for (int s = 0; s < STREAMS; s++)
        cudaStreamCreate(&streams[s]);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);

    cudaEventRecord(start, 0);
    for (int r = 0; r < REPS; r++) {
        add<<<n / BLOCK, BLOCK>>>(dev, c, ITERATIONS);
        cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    }
    int part = n / STREAMS;
    for (int r = 0; r < REPS; r++) {
        for (int s = 0; s < STREAMS; s++)
            add<<<part / BLOCK, BLOCK, 0, streams[s]>>>(dev + s * part, c, ITERATIONS);
        for (int s = 0; s < STREAMS; s++)
            cudaMemcpyAsync(host + s * part, dev + s * part, part * sizeof(int), cudaMemcpyDeviceToHost, streams[s]);
    }
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);

    int expected = 2 * REPS * ITERATIONS * C, wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != expected;
    printf("%d ints, %d launches: %s\n", n, REPS * (1 + STREAMS), wrong ? "FAIL" : "PASS");
    for (int s = 0; s < STREAMS; s++)
        cudaStreamDestroy(streams[s]);
    cudaFreeHost(host);
    cudaFree(dev);
    cudaFree(c);
    return wrong != 0;
}
