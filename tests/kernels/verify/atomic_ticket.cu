// @verify_launch --grid 4 --block 256
// @verify count race-free
// @verify in race-free
// @verify out race-free
// Stream compaction: each kept element takes a ticket from the counter and
// writes its own slot. The additions to `count` happen one after another,
// so no two threads get the same ticket while fewer than 2^32 additions
// are made.
__global__ void compact(const int* in, int* out, unsigned* count)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    if (v > 0) {
        unsigned slot = atomicAdd(count, 1u);
        out[slot] = v;
    }
}
