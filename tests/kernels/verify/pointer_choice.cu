// @verify_launch --grid 2 --block 64
// @verify a race-free
// @verify b race-free
// A pointer chosen per thread: odd threads write a, even ones b, each at
// its pair's index, so two threads that share an index write different
// arrays. Each access through p is an access of a and of b, each under
// the condition that p points into it.
__global__ void split(int* a, int* b)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int* p = (i & 1) ? a : b;
    p[i / 2] = i;
}
