// @verify_launch --grid 4 --block 256
// @verify count race possible 12 14
// @verify in race-free
// @verify out race possible 15 15
// As atomic_ticket.cu, but thread 0 also resets the counter while the
// others take tickets: two threads can then get the same ticket.
__global__ void compact(const int* in, int* out, unsigned* count)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    if (i == 0)
        *count = 0;
    if (v > 0) {
        unsigned slot = atomicAdd(count, 1u);
        out[slot] = v;
    }
}
