// @launch --grid 2 --block 64 --arg buf:128 --arg 0 --redundant-barriers
// @expect redundant-barrier 11
// Whether the barrier is needed depends on the input: with off = 0 each
// thread reads back its own slot (redundant for this launch), with off = 1
// it reads its neighbour's (needed); tests/detect/test_barriers.py runs both.
__global__ void rotate(int* out, int off)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = t * 3;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[(t + off) % 64];
}
