// @verify_launch --grid 1 --block 256 --no-confirm
// @verify_barriers divergence possible 14
// @verify data race-free
// @verify s race possible 13 17
// An inner loop whose trip count depends on the thread (odd threads run one
// round more): its barrier is not passed as often by every thread.
__global__ void per_thread(float* data, unsigned n)
{
    __shared__ float s[1024];
    unsigned t = threadIdx.x;
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = (k >> 1) + (t & 1); j > 0; j >>= 1) {
            s[t] = data[t] + j;
            __syncthreads();
        }
    }
    data[t] = s[t ^ 1];
}
