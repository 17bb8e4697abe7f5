// @verify_launch --grid 1 --block 1024 --no-confirm
// @verify_barriers proved uniform
// @verify data race-free
// @verify s race possible 18 21
// The bitonic sort of nested_rounds.cu with its barrier moved out of the
// inner loop: the rounds of one outer iteration are no longer ordered, and
// a thread's exchange reads what its partner writes in the same stage.
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
        }
        __syncthreads();
    }
    data[t] = s[t];
}
