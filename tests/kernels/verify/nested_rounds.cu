// @verify_launch --grid 1 --block 1024
// @verify_barriers proved uniform
// @verify data race-free
// @verify s race-free
// A bitonic sort: the inner loop's trip count changes with the outer loop's
// iteration, but is the same in every thread, so the barriers passed by the
// end of an outer iteration are one function of that iteration for all
// threads, and every round's exchanges are ordered by the barrier after it.
__global__ void bitonic(float* data, unsigned n)
{
    __shared__ float s[1024];
    unsigned t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            unsigned ixj = t ^ j;
            if (ixj > t) {
                float a = s[t], b = s[ixj];
                bool up = (t & k) == 0;
                if ((a > b) == up) {
                    s[t] = b;
                    s[ixj] = a;
                }
            }
            __syncthreads();
        }
    }
    data[t] = s[t];
}
