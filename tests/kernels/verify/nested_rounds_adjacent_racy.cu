// @verify_launch --grid 1 --block 256 --no-confirm
// @verify_barriers proved uniform
// @verify data race-free
// @verify s race possible 15 18
// Rounds of an inner loop whose trip count changes with the outer loop: the
// read after the inner loop and the first write of the next outer iteration
// fall between the same two barriers (nothing separates them), so they race.
__global__ void adjacent(float* data, unsigned n)
{
    __shared__ float s[1024];
    unsigned t = threadIdx.x;
    float acc = 0;
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            s[t] = data[t] + j;
            __syncthreads();
        }
        acc += s[t ^ 1];
    }
    data[t] = acc;
}
