// Hints that change how fast a GPU runs a program, not what it computes, are accepted: prefetches of managed
// memory, memory advice, attaching managed memory to a stream, a stream's access policy window (read back as
// set), the synchronization policy, and resetting the persisting L2 cache. The simulated sm_75 device has no
// persisting L2 cache, so its size and its limit are 0, and a limit above it is refused as on such a GPU.
// @stdout persisting L2 0, window 0
// @stdout window 4096 bytes, hit ratio 0.50
// @stdout persisting limit above the cache: invalid argument
// @stdout data[31] = 62
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void twice(int *data) { data[threadIdx.x] *= 2; }

int main() {
    int persisting = -1, window = -1;
    cudaDeviceGetAttribute(&persisting, cudaDevAttrMaxPersistingL2CacheSize, 0);
    cudaDeviceGetAttribute(&window, cudaDevAttrMaxAccessPolicyWindowSize, 0);
    printf("persisting L2 %d, window %d\n", persisting, window);

    const int n = 32;
    int *data;
    cudaMallocManaged(&data, n * sizeof(int));
    for (int i = 0; i < n; i++) data[i] = i;
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemLocation device = {cudaMemLocationTypeDevice, 0};
    cudaMemAdvise(data, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device);
    cudaMemAdvise(data, n * sizeof(int), cudaMemAdviseSetReadMostly, device);
    cudaStreamAttachMemAsync(s, data, 0, cudaMemAttachSingle);
    cudaMemPrefetchAsync(data, n * sizeof(int), device, 0, s);

    cudaStreamAttrValue value = {};
    value.accessPolicyWindow.base_ptr = data;
    value.accessPolicyWindow.num_bytes = 4096;
    value.accessPolicyWindow.hitRatio = 0.5f;
    value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &value);
    cudaStreamAttrValue policy = {};
    policy.syncPolicy = cudaSyncPolicyYield;
    cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &policy);
    cudaStreamAttrValue back = {};
    cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back);
    printf("window %zu bytes, hit ratio %.2f\n", back.accessPolicyWindow.num_bytes, back.accessPolicyWindow.hitRatio);
    cudaError_t e = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20);
    printf("persisting limit above the cache: %s\n", cudaGetErrorString(e));
    cudaGetLastError();
    cudaCtxResetPersistingL2Cache();

    twice<<<1, n, 0, s>>>(data);
    cudaMemLocation host = {cudaMemLocationTypeHost, 0};
    cudaMemPrefetchAsync(data, n * sizeof(int), host, 0, s);
    cudaStreamSynchronize(s);
    printf("data[31] = %d\n", data[31]);
    cudaStreamDestroy(s);
    cudaFree(data);
    return 0;
}
