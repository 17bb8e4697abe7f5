// @launch --grid 1 --block 64 --arg buf:1 --arg buf:65 --schedules 4
// @expect data-race shared 14 15
// Found by: the reversed schedule 1, in which warp 1 draws the first ticket,
// with the barrier-interval detector (the happens-before detector agrees).
// The thread that draws ticket 0 publishes its index in shared memory; thread
// 0 reads it before the barrier. Under schedule 0 (min-pc) the atomic serves
// the lanes in thread order, so thread 0 draws ticket 0 and reads its own
// write; when warp 1 draws first, thread 32 writes what thread 0 reads in the
// same barrier interval.
__global__ void k(int* ticket, int* out)
{
    __shared__ int first;
    int t = atomicAdd(ticket, 1);
    if (t == 0) first = threadIdx.x;
    if (threadIdx.x == 0) out[0] = first;
    __syncthreads();
    out[threadIdx.x + 1] = first;
}
