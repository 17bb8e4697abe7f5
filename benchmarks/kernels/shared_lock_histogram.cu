// A per-block histogram in shared memory built under block-scope spin locks, for throughput benchmarks.
//
// The locks and buckets live in shared memory; a thread takes a bucket's lock
// with atomicCAS_block and __threadfence_block(), updates the bucket with a
// plain read-modify-write and releases it with __threadfence_block() and
// atomicExch_block. Every 16th item it peeks at the bucket without the lock
// (a race within the block). There is no barrier, so the buckets are not
// zeroed first (the counts are not the point); each thread writes what it saw
// of a bucket to its own output word, so nothing races on global memory.
#define BUCKETS 32

__global__ void shared_lock_histogram(const int* data, int* out, int items)
{
    __shared__ int locks[BUCKETS];
    __shared__ int hist[BUCKETS];
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    int seen = 0;
    for (int k = 0; k < items; ++k) {
        int i = k * stride + tid;
        int b = data[i] % BUCKETS;
        while (atomicCAS_block(&locks[b], 0, 1) != 0) {
        }
        __threadfence_block();
        seen = hist[b] + 1;
        hist[b] = seen;
        __threadfence_block();
        atomicExch_block(&locks[b], 0);
        if ((k & 15) == 15)
            seen += hist[b];
        out[i] = seen;
    }
}
