// Memory pools beyond the default one: a pool made with cudaMemPoolCreate (with a maximum size), allocations
// from it with cudaMallocFromPoolAsync and, once it is the device's current pool, with cudaMallocAsync; its
// usage attributes count its own allocations only; an allocation past its maximum size fails with
// cudaErrorMemoryAllocation; access from the one device is read-write, and another device does not exist.
// Destroying the pool while an allocation from it is live leaves that allocation usable until it is freed.
// @stdout created: cudaSuccess
// @stdout kernel sum = 992
// @stdout pool used 256, default pool used 0
// @stdout past the maximum: cudaErrorMemoryAllocation
// @stdout current pool is mine: 1, used 384
// @stdout access: cudaSuccess, flags 3, other device: cudaErrorInvalidDevice
// @stdout destroyed: cudaSuccess, allocate from it: cudaErrorInvalidValue, current is the default: 1
// @stdout still usable: 4 124
// @exit 0
// @launches 2
// @expect clean
#include <cstdint>
#include <cstdio>

__global__ void twice(const int *in, int *out) { out[threadIdx.x] = 2 * in[threadIdx.x]; }

static uint64_t used(cudaMemPool_t pool) {
    uint64_t value = 0;
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &value);
    return value;
}

int main() {
    const int n = 32;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location = {cudaMemLocationTypeDevice, 0};
    props.maxSize = 1024;
    cudaMemPool_t pool, default_pool, current;
    printf("created: %s\n", cudaGetErrorName(cudaMemPoolCreate(&pool, &props)));
    cudaDeviceGetDefaultMemPool(&default_pool, 0);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

    int host[n], *in, *out;
    for (int i = 0; i < n; i++) host[i] = i;
    cudaMallocFromPoolAsync(&in, n * sizeof(int), pool, s);
    cudaMallocFromPoolAsync(&out, n * sizeof(int), pool, s);
    cudaMemcpyAsync(in, host, sizeof host, cudaMemcpyHostToDevice, s);
    twice<<<1, n, 0, s>>>(in, out);
    cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    int sum = 0;
    for (int i = 0; i < n; i++) sum += host[i];
    printf("kernel sum = %d\n", sum);
    printf("pool used %llu, default pool used %llu\n", (unsigned long long)used(pool), (unsigned long long)used(default_pool));

    void *big;
    printf("past the maximum: %s\n", cudaGetErrorName(cudaMallocFromPoolAsync(&big, 1024, pool, s)));
    cudaDeviceSetMemPool(0, pool);
    cudaDeviceGetMemPool(&current, 0);
    int *more;
    cudaMallocAsync(&more, 128, s);
    printf("current pool is mine: %d, used %llu\n", current == pool, (unsigned long long)used(pool));

    cudaMemAccessDesc desc = {};
    desc.location = {cudaMemLocationTypeDevice, 0};
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    cudaError_t set = cudaMemPoolSetAccess(pool, &desc, 1);
    cudaMemAccessFlags flags;
    cudaMemLocation here = {cudaMemLocationTypeDevice, 0}, other = {cudaMemLocationTypeDevice, 1};
    cudaMemPoolGetAccess(&flags, pool, &here);
    printf("access: %s, flags %d, other device: %s\n", cudaGetErrorName(set), (int)flags,
           cudaGetErrorName(cudaMemPoolGetAccess(&flags, pool, &other)));

    cudaFreeAsync(in, s);
    cudaFreeAsync(more, s);
    cudaError_t destroyed = cudaMemPoolDestroy(pool);
    void *late;
    cudaError_t late_status = cudaMallocFromPoolAsync(&late, 128, pool, s);
    cudaDeviceGetMemPool(&current, 0);
    printf("destroyed: %s, allocate from it: %s, current is the default: %d\n", cudaGetErrorName(destroyed),
           cudaGetErrorName(late_status), current == default_pool);
    twice<<<1, n, 0, s>>>(out, out);
    cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    printf("still usable: %d %d\n", host[1], host[n - 1]);
    cudaFreeAsync(out, s);
    cudaStreamSynchronize(s);
    return 0;
}
