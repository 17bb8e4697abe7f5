// @verify_launch --grid 4 --block 1024
// @verify count race-free
// @verify out race-free
// Tickets in steps of 2^20: 4096 threads take 4096 distinct values before
// the 32-bit counter comes around (atomic_ticket_stride_racy.cu launches
// twice as many).
__global__ void claim(int* out, unsigned* count)
{
    unsigned slot = atomicAdd(count, 1u << 20) >> 20;
    out[slot] = threadIdx.x;
}
