// @verify_launch --grid 8 --block 1024
// @verify count race-free
// @verify out race confirmed 9 9
// As atomic_ticket_stride.cu with 8192 threads: the counter comes around
// after 4096 additions, so threads 0 and 4096 of the order get one slot.
__global__ void claim(int* out, unsigned* count)
{
    unsigned slot = atomicAdd(count, 1u << 20) >> 20;
    out[slot] = threadIdx.x;
}
