// @launch --grid 2 --block 64 --arg buf:128 --arg 3 --redundant-barriers
// @expect clean
// One barrier in a loop, needed only between the first and the third
// iteration: no two consecutive iterations conflict, but removing the
// statement removes every instance, and then the write of iteration 0 and
// the read of a neighbour's slot in iteration 2 race.
__global__ void late_read(int* out, int rounds)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    int y = 0;
    for (int i = 0; i < rounds; ++i) {
        if (i == 0) s[t] = t;
        if (i == 2) y = s[(t + 1) % 64];
        __syncthreads();
    }
    out[blockIdx.x * 64 + t] = y;
}
