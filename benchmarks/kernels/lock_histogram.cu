// A histogram built under device-scope spin locks, for throughput benchmarks.
//
// Each thread counts `items` of its own inputs: it takes the spin lock of the
// bucket (atomicCAS loop, then __threadfence()), updates the bucket with a plain
// read-modify-write, and releases the lock (__threadfence(), then atomicExch).
// Its input and output words are its own (no race). Every 16th item it peeks at
// the bucket without the lock: a read racing with other threads' locked writes.
// No barriers, so every event has a counterpart in a lock-based trace format.
__global__ void lock_histogram(const int* data, int* locks, int* hist, int* out, int items, int buckets)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    int peeked = 0;
    for (int k = 0; k < items; ++k) {
        int i = k * stride + tid;
        int b = data[i] % buckets;
        while (atomicCAS(&locks[b], 0, 1) != 0) {
        }
        __threadfence();
        hist[b] = hist[b] + 1;
        __threadfence();
        atomicExch(&locks[b], 0);
        if ((k & 15) == 15)
            peeked += hist[b];
        out[i] = b;
    }
    out[items * stride + tid] = peeked;
}
