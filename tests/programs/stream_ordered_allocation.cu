// Stream-ordered allocation: buffers from cudaMallocAsync, filled, used and freed with cudaFreeAsync in the
// order of one stream, the device's default memory pool and its attributes, and cudaMemGetInfo, whose free
// bytes drop by what is allocated and come back when it is freed (the pool's usage counts the live
// allocations: `in` is freed when it is read, its high-water mark is both).
// @stdout pools supported: 1
// @stdout threshold 1048576, used 4096, high 8192
// @stdout free bytes drop by 4096
// @stdout sum = 992
// @stdout used after free 0, high reset to 0
// @stdout free bytes back: 1
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>
#include <cstdint>

__global__ void twice(const int *in, int *out) { out[threadIdx.x] = 2 * in[threadIdx.x]; }

int main() {
    int supported = 0;
    cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0);
    printf("pools supported: %d\n", supported);
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    uint64_t threshold = 1 << 20;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    size_t free_before, total;
    cudaMemGetInfo(&free_before, &total);

    const int n = 32;
    int host[n];
    for (int i = 0; i < n; i++) host[i] = i;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    int *in, *out;
    cudaMallocAsync(&in, 4096, s);
    cudaMallocFromPoolAsync(&out, 4096, pool, s);
    cudaMemcpyAsync(in, host, sizeof host, cudaMemcpyHostToDevice, s);
    twice<<<1, n, 0, s>>>(in, out);
    cudaFreeAsync(in, s);
    cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, s);

    uint64_t got = 0, used = 0, high = 0;
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high);
    printf("threshold %llu, used %llu, high %llu\n", (unsigned long long)got, (unsigned long long)used,
           (unsigned long long)high);
    size_t free_during;
    cudaMemGetInfo(&free_during, &total);
    printf("free bytes drop by %zu\n", free_before - free_during); // `in` is freed already, `out` is not
    cudaFreeAsync(out, s);
    cudaStreamSynchronize(s);
    int sum = 0;
    for (int i = 0; i < n; i++) sum += host[i];
    printf("sum = %d\n", sum);

    uint64_t zero = 0;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high);
    printf("used after free %llu, high reset to %llu\n", (unsigned long long)used, (unsigned long long)high);
    cudaMemPoolTrimTo(pool, 0);
    size_t free_after;
    cudaMemGetInfo(&free_after, &total);
    printf("free bytes back: %d\n", free_after == free_before);
    cudaStreamDestroy(s);
    return 0;
}
